"""What a user would write instead of wearfleetd: bleak with bleak-retry-connector, subscribed to
the data stream of every motion band it is given, counting notifications.

Usage: DBUS_SYSTEM_BUS_ADDRESS=unix:path=... python bleak_ingest.py ADDRESS@ADAPTER...

Discovers and connects the devices one after another (BleakScanner.find_device_by_address on the
device's adapter, then bleak_retry_connector.establish_connection), subscribes with
start_notify, then prints
`connected SECONDS`. On SIGUSR1 it prints one JSON line for the window since the last one, with
the same fields as fleet-bench's other receivers: count, seconds, cpu_us (getrusage of this
process), p50_us and p99_us (latency from the simulator's send time, carried in bytes 2..9 of
each notification as CLOCK_MONOTONIC nanoseconds, to the callback), samples. SIGTERM ends it at
once, without disconnecting (the links belong to the benchmark's fleet).
"""

import asyncio
import json
import os
import resource
import signal
import sys
import time

from bleak import BleakScanner
from bleak_retry_connector import BleakClientWithServiceCache, establish_connection

MOTION_DATA = "7a1e0002-3c6f-4b8d-9e2a-5d0c8f6b1a40"


class Window:
    def __init__(self):
        self.count = 0
        self.latencies = []
        self.started = time.monotonic()
        self.cpu = self.cpu_us()

    @staticmethod
    def cpu_us():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return int((usage.ru_utime + usage.ru_stime) * 1_000_000)

    def on_value(self, _sender, data: bytearray):
        self.count += 1
        if len(data) >= 10:
            sent = int.from_bytes(data[2:10], "little")
            self.latencies.append(max(0, (time.monotonic_ns() - sent) // 1000))

    def report(self):
        now, cpu = time.monotonic(), self.cpu_us()
        ordered = sorted(self.latencies)

        def percentile(p):
            return ordered[round(p * (len(ordered) - 1))] if ordered else 0

        line = {
            "count": self.count,
            "seconds": now - self.started,
            "cpu_us": cpu - self.cpu,
            "p50_us": percentile(0.5),
            "p99_us": percentile(0.99),
            "samples": len(ordered),
        }
        print(json.dumps(line), flush=True)
        self.count, self.latencies, self.started, self.cpu = 0, [], now, cpu


async def connect(target, window):
    address, _, adapter = target.partition("@")
    device = await BleakScanner.find_device_by_address(address, timeout=30, bluez={"adapter": adapter or "hci0"})
    if device is None:
        raise RuntimeError(f"{address} was not found on {adapter or 'hci0'}")
    client = await establish_connection(BleakClientWithServiceCache, device, address, max_attempts=4)
    await client.start_notify(MOTION_DATA, window.on_value)
    return client


async def main(addresses):
    window = Window()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, window.report)
    loop.add_signal_handler(signal.SIGTERM, lambda: os._exit(0))
    started = time.monotonic()
    clients = []
    for target in addresses:
        clients.append(await connect(target, window))
    print(f"connected {time.monotonic() - started:.3f}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: bleak_ingest.py ADDRESS@ADAPTER...", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main(sys.argv[1:]))
    except Exception as error:  # say what failed, then fail
        print(f"bleak_ingest: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
