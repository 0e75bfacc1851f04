#!/usr/bin/env python3
"""Runs the demo headless and prints the figures the daemon issue asks for.

usage: scripts/demo-figures.py BUILD_DIR [SECONDS]

From wearfleetd's log (console format, .build/demo/wearfleetd.log) and /proc:
  - time from wearfleetd's start to every pinned device ready,
  - after the scenario's bluetoothd restart (80 s in): time until every pinned device is ready
    again, counted from bluetoothd's return and from the moment it vanished,
  - wearfleetd's RSS with the demo's 12 devices (sampled every second; last and peak).
"""
import os, re, subprocess, sys, time
from datetime import datetime

build_dir = sys.argv[1] if len(sys.argv) > 1 else ".build/debug"
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 100
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
log = os.path.join(root, ".build/demo/wearfleetd.log")
pinned = {"AA:BB:CC:00:00:01", "AA:BB:CC:00:00:02", "AA:BB:CC:00:00:03", "AA:BB:CC:00:00:04"}

demo = subprocess.Popen([os.path.join(root, "scripts/demo.sh"), build_dir], env={**os.environ, "DEMO_SECONDS": str(seconds)},
                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
rss = []
deadline = time.time() + seconds + 30
while demo.poll() is None and time.time() < deadline:
    out = subprocess.run(["pgrep", "-f", f"{build_dir}/wearfleetd --config"], capture_output=True, text=True).stdout.split()
    for pid in out[:1]:
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        rss.append(int(line.split()[1]))
        except OSError:
            pass
    time.sleep(1)
demo.wait()

stamp = re.compile(r"^(\S+Z) +(\w+) +(.*)$")
def when(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()

start = None
ready = {}
all_ready = None
vanished = returned = recovered = None
state = {}
for line in open(log, encoding="utf-8"):
    match = stamp.match(line)
    if not match:
        continue
    t, message = when(match.group(1)), match.group(3)
    if start is None and "event=started" in message:
        start = t
    address = re.search(r"device_address=(\S+)", message)
    target = re.search(r"device_state=(\S+)", message)
    if address and target and "event=state_changed" in message:
        state[address.group(1)] = target.group(1)
        if all(state.get(a) == "ready" for a in pinned):
            if all_ready is None:
                all_ready = t
            elif vanished is not None and recovered is None and t > vanished:
                recovered = t
    if "bluetoothd_vanished" in message or "bluetoothd vanished" in message:
        vanished = vanished or t
    if vanished and returned is None and ("bluetoothd_appeared" in message or "bluetoothd appeared" in message) and t > vanished:
        returned = t

print(f"time from start to all {len(pinned)} pinned ready: " + (f"{all_ready - start:.2f} s" if start and all_ready else "not reached"))
if vanished and recovered:
    print(f"bluetoothd restart: all pinned ready {recovered - vanished:.2f} s after it vanished"
          + (f", {recovered - returned:.2f} s after it returned" if returned else ""))
else:
    print("bluetoothd restart: no recovery seen in the log (run longer than 85 s)")
if rss:
    print(f"wearfleetd RSS with 12 devices: {rss[-1] / 1024:.1f} MiB at the end, peak {max(rss) / 1024:.1f} MiB ({len(rss)} samples)")
