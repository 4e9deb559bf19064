#!/usr/bin/env python3
"""Fault injection for dit-run: each scenario runs real ranks on loopback and
prints what every rank did (exit code, time, first error line) and whether
an output file appeared, for FileCheck.

  kill      PLAN: N ranks; once rank 0 reports step 1, rank N-1 is killed
            with SIGKILL. The others must exit 1 within --timeout.
  kill-replica PLAN: as kill, for data-parallel replicas that never wait on
            each other mid-run, so the others are reported untimed: they
            finish their own steps before waiting --timeout.
  absent    PLAN: all ranks but the last start; the rendezvous times out.
  mismatch  PLAN OTHER: rank 0 runs PLAN, the others OTHER (same size).
  replicas  PLAN OTHER: the first half of the ranks (dp replica 0 of two,
            dp being the outermost axis) run PLAN, the rest OTHER: each
            replica votes on its own group, so both agree.
  replica-mismatch PLAN OTHER: the last rank runs OTHER, the others PLAN:
            the last replica refuses before any compute.
  launcher-kill PLAN: dit-run --nproc N; a rank process is killed mid-run.
  bundles   PLAN: rank r runs PLAN/rank-<r> (ditc compile --per-rank), as a
            deployment pipeline ships them: the no-fault baseline.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

from compare import world_size


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(dit_run, plan, rank, world, port, output, args, extra=()):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world),
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    log = open(f"{output}.rank{rank}.log", "w+")
    proc = subprocess.Popen([dit_run, plan, "--output", output, "--steps",
                             str(args.steps), "--timeout", str(args.timeout), *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=log)
    return proc, log


def first_error(log):
    log.seek(0)
    for line in log.read().splitlines():
        if line.startswith("dit-run: ") and "step " not in line:
            return line
    return "(no error line)"


def wait_for(log, text, limit, poll=0.05):
    deadline = time.time() + limit
    while time.time() < deadline:
        log.seek(0)
        if text in log.read():
            return True
        time.sleep(poll)
    return False


def children_of(pid):
    """Process ids whose parent is `pid`, from /proc (no procps needed)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry))
            except OSError:
                pass
    return sorted(found)


def report(procs, started, output, timeout, skip=(), slack=2):
    for rank, (proc, log) in enumerate(procs):
        if rank in skip:
            continue
        code = proc.wait(timeout=600)
        elapsed = time.time() - started
        if slack is None:
            # Timed from the start, the time is mostly libtorch's load on a
            # busy machine; the message itself says when the wait ended.
            print(f"rank {rank}: exit {code}: {first_error(log)}")
            continue
        # The slack covers process teardown on a loaded machine.
        within = "within" if elapsed <= timeout + slack else "AFTER"
        print(f"rank {rank}: exit {code} {within} the {timeout} s timeout: "
              f"{first_error(log)}")
    print("output file:", "present" if os.path.exists(output) else "absent")
    leftovers = [f for f in os.listdir(os.path.dirname(output) or ".")
                 if f.startswith(os.path.basename(output) + ".tmp")]
    print("temporary files:", leftovers if leftovers else "none")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario")
    parser.add_argument("plans", nargs="+")
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--steps", type=int, default=100000)
    parser.add_argument("--timeout", type=int, default=5)
    args = parser.parse_args()
    plan = args.plans[0]
    world = world_size(plan)
    port = free_port()
    if os.path.exists(args.output):
        os.remove(args.output)

    if args.scenario == "kill":
        procs = [start(args.dit_run, plan, r, world, port, args.output, args)
                 for r in range(world)]
        if not wait_for(procs[0][1], "step 1/", 120):
            sys.exit("rank 0 never finished step 1")
        victim = world - 1
        procs[victim][0].send_signal(signal.SIGKILL)
        killed_at = time.time()
        procs[victim][0].wait()
        print(f"rank {victim}: killed by SIGKILL after step 1")
        report(procs, killed_at, args.output, args.timeout, skip=(victim,))
    elif args.scenario == "kill-replica":
        procs = [start(args.dit_run, plan, r, world, port, args.output, args)
                 for r in range(world)]
        # A replica's steps take milliseconds: poll often, and make sure rank
        # 0 had not already finished (then the kill would prove nothing).
        if not wait_for(procs[0][1], "step 1/", 120, poll=0.005):
            sys.exit("rank 0 never finished step 1")
        victim = world - 1
        procs[victim][0].send_signal(signal.SIGKILL)
        procs[victim][0].wait()
        procs[0][1].seek(0)
        if f"step {args.steps}/" in procs[0][1].read():
            sys.exit(f"rank 0 finished all {args.steps} steps before the kill: "
                     "raise --steps")
        print(f"rank {victim}: killed by SIGKILL after step 1")
        report(procs, time.time(), args.output, args.timeout, skip=(victim,),
               slack=None)
    elif args.scenario == "absent":
        started = time.time()
        procs = [start(args.dit_run, plan, r, world, port, args.output, args)
                 for r in range(world - 1)]
        print(f"rank {world - 1}: never started")
        report(procs, started, args.output, args.timeout, slack=None)
    elif args.scenario == "mismatch":
        other = args.plans[1]
        started = time.time()
        procs = [start(args.dit_run, plan if r == 0 else other, r, world, port,
                       args.output, args) for r in range(world)]
        report(procs, started, args.output, args.timeout, slack=None)
    elif args.scenario in ("replicas", "replica-mismatch"):
        other = args.plans[1]
        started = time.time()

        def plan_of(r):
            if args.scenario == "replicas":
                return plan if r < world // 2 else other
            return other if r == world - 1 else plan

        procs = [start(args.dit_run, plan_of(r), r, world, port, args.output, args)
                 for r in range(world)]
        report(procs, started, args.output, args.timeout, slack=None)
    elif args.scenario == "launcher-kill":
        log = open(args.output + ".launcher.log", "w+")
        launcher = subprocess.Popen(
            [args.dit_run, plan, "--nproc", str(world), "--output", args.output,
             "--steps", str(args.steps), "--timeout", str(args.timeout)],
            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        if not wait_for(log, "step 1/", 120):
            sys.exit("rank 0 never finished step 1")
        victim = children_of(launcher.pid)[-1]
        os.kill(victim, signal.SIGKILL)
        killed_at = time.time()
        code = launcher.wait(timeout=600)
        elapsed = time.time() - killed_at
        within = "within" if elapsed <= args.timeout + 2 else "AFTER"
        print(f"launcher: exit {code} {within} the {args.timeout} s timeout")
        log.seek(0)
        for line in log.read().splitlines():
            if "killed by signal" in line or ("failed" in line and "rank 0" in line):
                print(line)
        print("output file:", "present" if os.path.exists(args.output) else "absent")
    elif args.scenario == "bundles":
        started = time.time()
        procs = [start(args.dit_run, os.path.join(plan, f"rank-{r}"), r, world, port,
                       args.output, args) for r in range(world)]
        report(procs, started, args.output, args.timeout, slack=None)
    else:
        sys.exit(f"unknown scenario {args.scenario}")


if __name__ == "__main__":
    main()
