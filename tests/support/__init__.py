"""What the tests share that is not a test: the virtual Slurm cluster's fixtures (clusters), the
fuzzers of the benchmarks' and the command's input (fuzz_benchmarks, fuzz_cli; each also a script
for longer sessions) and the ReFrame runs the checks' tests make (reframe_runs).  pytest collects
nothing here."""
