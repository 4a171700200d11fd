"""A site's own ReFrame configuration for jitterbench's checks: an InfiniBand cluster with
Slurm, Open MPI over UCX and Intel MPI over OFI's mlx provider.  Copy it, fill in the
names marked SITE, and run

    reframe -C mysite.py --system acme -c <jitterbench>/reframe_checks -t quick -r

It declares only what the README's "The site contract" lists: the checks need nothing
else from a site.  (To run it from jitterbench's own configuration instead, give the
system module a SYSTEM and ENVIRONMENTS, as systems/vcluster.py does, and list it in
SYSTEM_MODULES of systems/config.py: then the quick and acceptance modes apply.)
"""

# The transport each environment uses per fabric, by the names of jitterbench/transports.py:
# a check fails when the MPI's own account of its run says otherwise.
OPENMPI_UCX = {
    "family": "openmpi",
    "transports": {"shm": "ompi-ucx-shm", "ib": "ompi-ucx-ib"},
    "eager_vars": {"shm": "UCX_RNDV_THRESH", "ib": "UCX_RNDV_THRESH"},
    "devices_vars": {"ib": "UCX_NET_DEVICES"},          # the rails: mlx5_0:1, then mlx5_1:1
    "bind_vars": {"OMPI_MCA_hwloc_base_binding_policy": "core"},
}
INTEL_MPI_MLX = {
    "family": "intelmpi",
    "transports": {"shm": "impi-shm", "ib": "impi-ofi-ib"},
    "eager_vars": {"ib": "UCX_RNDV_THRESH"},            # mlx runs over UCX
    "devices_vars": {"ib": "UCX_NET_DEVICES"},
    "bind_vars": {"I_MPI_PIN": "1", "I_MPI_PIN_DOMAIN": "core"},
}

site_configuration = {
    "systems": [{
        "name": "acme",                                 # SITE
        "descr": "an InfiniBand cluster, two HDR rails per node",
        "hostnames": [r"^acme-login\d+$"],              # SITE
        "modules_system": "lmod",
        "partitions": [
            {
                "name": "compute",
                "scheduler": "slurm",
                "launcher": "srun",
                "access": ["-p compute"],               # SITE
                "environs": ["gnu-openmpi", "intel-impi"],
                "features": ["mpi", "rdma"],
                "max_jobs": 4,
                "extras": {"max_nodes": 256, "max_tasks_per_node": 128,   # SITE
                           "transports": ["shm", "ib"],
                           "rails": ["mlx5_0:1", "mlx5_1:1"],
                           "rdma_devices": ["mlx5_0"]},
            },
            {
                "name": "debug",
                "scheduler": "slurm",
                "launcher": "srun",
                "access": ["-p debug"],                 # SITE
                "environs": ["gnu-openmpi"],
                "features": ["mpi"],
                "max_jobs": 1,
                "extras": {"max_nodes": 4, "max_tasks_per_node": 128, "transports": ["shm", "ib"]},
            },
        ],
    }],
    "environments": [
        {"name": "gnu-openmpi", "target_systems": ["acme"], "features": ["mpi"], "cc": "mpicc",
         "modules": ["gcc", "openmpi"],                 # SITE: an Open MPI built with UCX
         "env_vars": [["OMPI_MCA_pml", "ucx"]], "extras": OPENMPI_UCX},
        {"name": "intel-impi", "target_systems": ["acme"], "features": ["mpi"], "cc": "mpiicx",
         "modules": ["intel-oneapi-mpi"],               # SITE
         "env_vars": [["I_MPI_FABRICS", "shm:ofi"], ["I_MPI_OFI_PROVIDER", "mlx"]], "extras": INTEL_MPI_MLX},
    ],
}
