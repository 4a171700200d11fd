#!/bin/sh
# The launches of one test case (jitterbench/harness/launches.py, LaunchedCheck.launch_several_times):
#
#   sh launches.sh LAUNCHES TRIES FIRST LAUNCHER [OPTIONS...] PROGRAM [OPTIONS...]
#
# Launch-to-launch variation dominates call-to-call variation (docs/references.md, "Launches"), so
# a case launches its benchmark LAUNCHES times, each a launcher call of its own, in a folder of its
# own: launch-1/, launch-2/, ... hold each launch's files (its --json document) and its stdout and
# stderr.  A launch whose benchmark found it disturbed (its '# load:' line says `_disturbed=1`: the
# rule of src/core/load.c) is launched again, at most TRIES tries in all; a disturbed try stays in the
# stage folder as disturbed-<i>-try-<t>/ (not among the case's kept files: it is no launch of it).  Each launch kept is copied to this script's stdout (and stderr) after the
# line '# launch: I of LAUNCHES, try T of TRIES', so the job's output holds one block per launch,
# which the check reads.  The first launch that fails ends the script with its exit status, after a
# line (on stdout and stderr) naming it and its first error line.
# Launch I runs PROGRAM with --rank-order FIRST+I-1 added: the ranks' roles rotated over the same
# placement (src/core/run.c), so a task that holds the maximum for its role in one launch does not
# in the next, and only a slot slow in most launches is named (jitterbench.report_figures).  FIRST
# '-' (the checks' default; rotate_roles) adds nothing: the ranks keep their roles.
set -u
launches=$1 tries=$2 first=$3
shift 3
i=1
while [ "$i" -le "$launches" ]; do
    t=1
    while :; do
        dir=launch-$i
        mkdir "$dir" || exit 1
        # env: a launcher line may begin with NAME=VALUE words (poe's MP_PROCS=8 ... poe)
        if [ "$first" = - ]; then order=; else order="--rank-order $((first + i - 1))"; fi
        # shellcheck disable=SC2086  # $order: no word or two
        (cd "$dir" && exec env "$@" $order >stdout 2>stderr)
        status=$?
        [ "$status" -eq 0 ] && [ "$t" -lt "$tries" ] && grep -q '^# load:.*_disturbed=1' "$dir/stdout" || break
        mv "$dir" "disturbed-$i-try-$t" || exit 1
        echo "# launch: $i of $launches, try $t of $tries disturbed: launched again;" \
            "$(grep '^# load:' "disturbed-$i-try-$t/stdout")"
        t=$((t + 1))
    done
    echo "# launch: $i of $launches, try $t of $tries"
    cat "$dir/stdout"
    cat "$dir/stderr" >&2
    if [ "$status" -ne 0 ]; then
        # its first error line, on both streams: where the MPI's account of its transport (verbose
        # lines) fills the launch's stderr, ReFrame's tail of rfm_job.err shows only that
        failed="# launch: $i of $launches failed with exit status $status"
        first_error=$(grep -m1 -i 'error' "$dir/stderr")
        [ -z "$first_error" ] || failed="$failed; its first error line: $first_error"
        echo "$failed"
        echo "$failed" >&2
        exit "$status"
    fi
    i=$((i + 1))
done
