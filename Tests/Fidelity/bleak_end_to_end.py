"""Drives a BlueZ service with bleak, end to end, and prints one JSON line with what it saw.

Usage: DBUS_SYSTEM_BUS_ADDRESS=unix:path=... python bleak_end_to_end.py
Exits non-zero, with the failing step on stderr, when a step fails.
"""

import asyncio
import json
import os
import sys

from bleak import BleakClient, BleakScanner

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
MOTION_SERVICE = "7a1e0001-3c6f-4b8d-9e2a-5d0c8f6b1a40"
MOTION_CONTROL = "7a1e0003-3c6f-4b8d-9e2a-5d0c8f6b1a40"
SCAN_SECONDS = float(os.environ.get("BLEAK_SCAN_SECONDS", "3"))


async def find(scanner_timeout, service):
    devices = await BleakScanner.discover(timeout=scanner_timeout, return_adv=True)
    for device, advertisement in devices.values():
        if service in advertisement.service_uuids:
            return device, advertisement, len(devices)
    raise RuntimeError(f"no device advertising {service} among {len(devices)}")


async def heart_rate_session(result):
    device, advertisement, seen = await find(SCAN_SECONDS, HEART_RATE_SERVICE)
    result["devices_seen"] = seen
    result["strap"] = device.address
    result["strap_rssi"] = advertisement.rssi
    async with BleakClient(device, timeout=10.0) as client:
        result["connected"] = client.is_connected
        result["services"] = sorted(s.uuid for s in client.services)
        result["battery"] = (await client.read_gatt_char(BATTERY_LEVEL))[0]
        beats = []
        got_three = asyncio.Event()

        def on_heart_rate(_, data: bytearray):
            beats.append(data[1])
            if len(beats) >= 3:
                got_three.set()

        await client.start_notify(HEART_RATE_MEASUREMENT, on_heart_rate)
        await asyncio.wait_for(got_three.wait(), 10)
        await client.stop_notify(HEART_RATE_MEASUREMENT)
        result["heart_rates"] = beats[:3]
    result["disconnected"] = True


async def motion_session(result):
    device, _, _ = await find(SCAN_SECONDS, MOTION_SERVICE)
    result["band"] = device.address
    async with BleakClient(device, timeout=10.0) as client:
        replies = []
        replied = asyncio.Event()

        def on_reply(_, data: bytearray):
            replies.append(list(data))
            replied.set()

        await client.start_notify(MOTION_CONTROL, on_reply)
        # Command 0x03: status; written without response.
        await client.write_gatt_char(MOTION_CONTROL, bytes([0x03]), response=False)
        await asyncio.wait_for(replied.wait(), 10)
        result["control_reply"] = replies[0]
        control = client.services.get_characteristic(MOTION_CONTROL)
        result["max_write_without_response"] = control.max_write_without_response_size


async def main():
    result = {}
    step = "heart rate session"
    try:
        await heart_rate_session(result)
        step = "motion band session"
        await motion_session(result)
    except Exception as error:  # report which step failed, then fail
        print(f"bleak end-to-end failed during {step}: {type(error).__name__}: {error}", file=sys.stderr)
        print(json.dumps(result), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))


asyncio.run(main())
