#!/usr/bin/env python3
"""Per-thread CPU load of running processes, to find the thread that saturates first.

  tools/thread-load.py sample OUT PID...   every second until the first PID exits (or SIGTERM): one
                                           line per thread, "time pid tid comm ticks" (user + system)
  tools/thread-load.py report OUT [TOP]    per process, its busiest threads: mean share of a CPU,
                                           90th percentile of the per-second shares, seconds at >= 95 %
"""
import collections
import os
import signal
import sys
import time


def sample(out, pids):
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    with open(out, "w") as f:
        while running[0] and os.path.exists(f"/proc/{pids[0]}"):
            now = time.monotonic()
            for pid in pids:
                try:
                    tids = os.listdir(f"/proc/{pid}/task")
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open(f"/proc/{pid}/task/{tid}/stat") as s:
                            stat = s.read()
                    except OSError:
                        continue
                    comm = stat[stat.index("(") + 1:stat.rindex(")")].replace(" ", "_")
                    fields = stat[stat.rindex(")") + 2:].split()
                    f.write(f"{now:.3f} {pid} {tid} {comm} {int(fields[11]) + int(fields[12])}\n")
            f.flush()
            time.sleep(1)


def report(out, top):
    hz = os.sysconf("SC_CLK_TCK")
    series = collections.defaultdict(list)  # (pid, tid, comm) -> [(time, ticks)]
    with open(out) as f:
        for line in f:
            t, pid, tid, comm, ticks = line.split()
            series[(pid, tid, comm)].append((float(t), int(ticks)))
    by_pid = collections.defaultdict(list)
    for (pid, tid, comm), points in series.items():
        shares = [(b[1] - a[1]) / hz / (b[0] - a[0]) for a, b in zip(points, points[1:]) if b[0] > a[0]]
        if not shares:
            continue
        shares.sort()
        mean = sum(shares) / len(shares)
        by_pid[pid].append((mean, shares[int(0.9 * (len(shares) - 1))], sum(s >= 0.95 for s in shares),
                            len(shares), tid, comm))
    for pid, threads in by_pid.items():
        threads.sort(reverse=True)
        total = sum(t[0] for t in threads)
        print(f"pid {pid}: {len(threads)} threads, {total:.2f} CPUs on average; busiest:")
        for mean, p90, hot, n, tid, comm in threads[:top]:
            print(f"  {comm:<16} tid {tid:>7}  mean {mean:5.2f}  p90 {p90:5.2f}  >=95 % in {hot} of {n} s")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "report":
        report(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 8)
    else:
        sys.exit(__doc__)
