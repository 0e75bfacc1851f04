"""Plots fleet-bench's ingest figures: notifications decoded per second and latency (p50, p99)
versus the number of devices, for each path and rate, with bleak and the C floor beside the
D-Bus path.

Usage: python plot_fleet_bench.py FLEET_BENCH_JSON OUTPUT_PNG
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def number(value):
    return float(value) if isinstance(value, (int, float)) else float("nan")


def main(source, output):
    with open(source) as handle:
        results = json.load(handle)
    cells = results.get("ingest", [])
    if not cells:
        print("plot_fleet_bench: no ingest figures to plot", file=sys.stderr)
        return 1
    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(13, 5.5))
    colors = {1: "tab:blue", 50: "tab:orange", 200: "tab:green"}
    keys = sorted({(c["path"], c["rateHz"], c["payloadBytes"]) for c in cells})
    for path, rate, payload in keys:
        series = sorted((c for c in cells if (c["path"], c["rateHz"], c["payloadBytes"]) == (path, rate, payload)),
                        key=lambda c: c["devices"])
        devices = [c["devices"] for c in series]
        style = "-" if path == "fd" else "--"
        marker = "o" if payload <= 20 else "s"
        color = colors.get(int(rate), "tab:gray")
        label = f"wearfleet {path} {int(rate)} Hz {payload} B"
        throughput.plot(devices, [number(c["wearfleet"]["perSecond"]) for c in series], style, marker=marker,
                        color=color, label=label)
        latency.plot(devices, [number(c["wearfleet"]["p99Microseconds"]) / 1000 for c in series], style,
                     marker=marker, color=color, label=label + " p99")
        latency.plot(devices, [number(c["wearfleet"]["p50Microseconds"]) / 1000 for c in series], ":",
                     marker=marker, color=color, alpha=0.5)
        if path == "dbus":
            bleak = [(c["devices"], c["bleak"]) for c in series if c.get("bleak")]
            if bleak:
                throughput.plot([d for d, _ in bleak], [number(b["perSecond"]) for _, b in bleak], "x", color=color,
                                markersize=10, label=f"bleak {int(rate)} Hz {payload} B")
                latency.plot([d for d, _ in bleak], [number(b["p99Microseconds"]) / 1000 for _, b in bleak], "x",
                             color=color, markersize=10)
    for axis in (throughput, latency):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("devices")
        axis.grid(True, which="both", alpha=0.3)
    throughput.set_ylabel("notifications decoded per second")
    throughput.set_title("Throughput (solid: fd path, dashed: D-Bus path, x: bleak)")
    latency.set_ylabel("latency from the device's send time, ms")
    latency.set_title("Latency p99 (p50 dotted)")
    throughput.legend(fontsize=7, ncol=2)
    figure.suptitle("fleet-bench ingest (bluez-sim on a private bus; same machine, same run)")
    figure.tight_layout()
    figure.savefig(output, dpi=110)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
