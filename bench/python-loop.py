# bench-python.sh's program: BATCHES batches of 100 comm.Allreduce calls on 8 bytes, 2 ranks;
# rank 0 prints the median per-call time of a batch ("median_per_call_ns NS").
import sys
import time
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
batches = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
one, out = array("d", [1.0]), array("d", [0.0])
per_call = []
for b in range(batches + 50):
    t0 = time.perf_counter_ns()
    for _ in range(100):
        comm.Allreduce(one, out, op=MPI.SUM)
    t1 = time.perf_counter_ns()
    if b >= 50:  # warm-up batches left out
        per_call.append((t1 - t0) / 100)
per_call.sort()
if comm.rank == 0:
    print(f"median_per_call_ns {per_call[len(per_call) // 2]:.1f}")
