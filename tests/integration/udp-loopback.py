"""Loopback UDP traffic at random times (the softirq test of `noisetool detour`,
test-detour-culprit.sh): pinned to CPU, sends 64-byte datagrams to its own socket on
127.0.0.1 at RATE a second on average (exponential gaps), reading them back, for SECONDS.
With lo's receive steering (rps_cpus) set to another CPU, that CPU runs a NET_RX softirq for
each one.

    python3 udp-loopback.py CPU SECONDS RATE"""
import os
import random
import socket
import sys
import time

cpu, secs, rate = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
os.sched_setaffinity(0, {cpu})
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(("127.0.0.1", 0))
rx.setblocking(False)
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to = rx.getsockname()
rng = random.Random(1)
print("ready", flush=True)
end = time.monotonic() + secs
at = time.monotonic()
sent = 0
while time.monotonic() < end:
    tx.sendto(b"x" * 64, to)
    sent += 1
    try:
        while True:
            rx.recv(2048)
    except BlockingIOError:
        pass
    at += rng.expovariate(rate)
    rest = at - time.monotonic()
    if rest > 0:
        time.sleep(rest)
print("sent", sent, flush=True)
