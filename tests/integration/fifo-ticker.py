"""A periodic SCHED_FIFO task named fifo-ticker (the task-name test of `noisetool detour`,
test-detour-culprit.sh): pinned to CPU, every PERIOD_US it spins SPIN_US, for SECONDS.
Exits 77 when this user may not use SCHED_FIFO.

    python3 fifo-ticker.py CPU SECONDS PERIOD_US SPIN_US"""
import ctypes
import os
import sys
import time

cpu, secs, period, spin = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e6, \
    float(sys.argv[4]) / 1e6
os.sched_setaffinity(0, {cpu})
ctypes.CDLL(None).prctl(15, b"fifo-ticker", 0, 0, 0)  # PR_SET_NAME
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except PermissionError:
    sys.exit(77)
print("ready", flush=True)
end = time.monotonic() + secs
tick = time.monotonic()
while time.monotonic() < end:
    t = time.perf_counter()
    while time.perf_counter() - t < spin:
        pass
    tick += period
    rest = tick - time.monotonic()
    if rest > 0:
        time.sleep(rest)
