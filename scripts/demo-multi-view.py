#!/usr/bin/env python3
"""The live table of make demo-multi: who owns each strap, whose link it is on, its state.

Reads what the demo's subscriber wrote (`mosquitto_sub -v`: one "topic payload" line per
message on the owner, state, alive, bids and status topics) and the shared world's ledger (the
simulated air: which gateway really holds each strap's link). Prints the table once.

usage: demo-multi-view.py RUN_DIR ELAPSED_SECONDS
"""
import json
import os
import sys

PREFIX = "wearfleet"


def read_messages(path):
    owners, states, status = {}, {}, {}
    ownership_messages = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            for line in log:
                topic, _, payload = line.rstrip("\n").partition(" ")
                parts = topic.split("/")
                if len(parts) == 4 and parts[0] == PREFIX and parts[1] == "device" and parts[3] == "owner":
                    ownership_messages += 1
                    try:
                        owners[parts[2]] = json.loads(payload) if payload else None
                    except ValueError:
                        pass
                elif len(parts) == 4 and parts[1] == "device" and parts[3] == "state":
                    try:
                        states[parts[2]] = json.loads(payload) if payload else None
                    except ValueError:
                        pass
                elif len(parts) == 4 and parts[1] == "gateway":
                    if parts[3] in ("alive", "bids"):
                        ownership_messages += 1
                    elif parts[3] == "status":
                        status[parts[2]] = payload
    except FileNotFoundError:
        pass
    return owners, states, status, ownership_messages


def main():
    run, elapsed = sys.argv[1], float(sys.argv[2])
    world = json.load(open(os.path.join(os.path.dirname(__file__), "..", "scenarios", "demo-multi.json")))
    owners, states, status, ownership_messages = read_messages(os.path.join(run, "ownership.log"))
    try:
        ledger = json.load(open(os.path.join(run, "world", "ledger.json")))
    except (FileNotFoundError, ValueError):
        ledger = {}
    records = ledger.get("devices", {})
    gateways = [g["id"] for g in world["world"]["gateways"]]
    owned = {g: 0 for g in gateways}
    ready = {g: 0 for g in gateways}
    rows = []
    double_links = 0
    for device in world["devices"]:
        address = device["address"]
        segment = address.replace(":", "")
        claim = owners.get(segment) or {}
        owner = claim.get("gw")
        if owner in owned:
            owned[owner] += 1
        state = states.get(segment) or {}
        if state.get("state") == "ready" and state.get("gateway") in ready:
            ready[state["gateway"]] += 1
        record = records.get(address, {})
        double_links += record.get("doubleLinks", 0)
        heard = " ".join(f"{g}:{rssi}" for g, rssi in sorted(device["heardByGateways"].items()))
        rows.append((device["name"], address, heard, owner or "-", str(claim.get("ep", "-")),
                     "yes" if claim.get("linked") else "no", record.get("holder") or "-",
                     f"{state.get('state', '-')}@{state.get('gateway', '-')}" if state else "-"))
    print("gateways: " + "; ".join(
        f"{g} {status.get(g, '?')}, owns {owned[g]}, {ready[g]} ready" for g in gateways))
    minutes = max(elapsed / 60, 1 / 60)
    print(f"ownership messages (claims, bids, heartbeats): {ownership_messages}, "
          f"{ownership_messages / len(world['devices']) / minutes:.1f} per device per minute since start; "
          f"double links in the world: {double_links}")
    print()
    header = ("STRAP", "ADDRESS", "HEARD BY (dBm)", "OWNER", "EPOCH", "LINKED", "LINK (AIR)", "STATE@GATEWAY")
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


if __name__ == "__main__":
    main()
