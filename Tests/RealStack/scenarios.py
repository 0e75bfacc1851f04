"""The real-stack tier's scenarios, run inside the guest (guest.sh) as root.

One process holds the radios (radio.py: two adapters behind /dev/vhci, the peripherals on the
same link), starts Debian's bluetoothd and the wearfleetd under test, and checks each scenario
from the daemon's own outputs (`wearfleetctl status --json`, the `wearfleetctl watch --json`
records, its JSON log) against the peripherals' counters. Every wait is for an event, with a
deadline sized for a guest under TCG emulation (20-50 times slower than the host); the only
fixed durations are the ones a scenario is about (a measurement window, a minute out of range).

Results: RESULTS/results.json (each scenario: passed, what was checked, figures), and the logs of
bluetoothd, wearfleetd and this driver, copied out by guest.sh.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import radio  # noqa: E402

BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"
ADAPTER_ADDRESSES = ["F0:F0:00:00:00:01", "F0:F0:00:00:00:02"]
SLOTS_PER_ADAPTER = 5
MAX_CONNECTIONS = 9
STRAPS = [(f"strap-{i}", f"C0:FF:EE:00:00:{i:02X}") for i in range(1, 9)]
POOL = [(f"HRM-pool-{i}", f"C0:FF:EE:00:01:{i:02X}") for i in range(1, 3)]
# Straps 1-4 use StartNotify (values as PropertiesChanged over the bus), 5-8 AcquireNotify (a
# socket per characteristic, past dbus-daemon).
START_NOTIFY = {address for _, address in STRAPS[:4]}
NOTIFY_INTERVAL = 1.0
# Deadlines for a 2-core host emulating the guest; a pass is usually far inside them.
READY_DEADLINE = 240.0
STEP_DEADLINE = 60.0
FAILURE_CLASSES = {"transient", "outOfSlots", "notReady", "protocol", "gone", "busy", "denied", "unknown"}


class ScenarioFailed(Exception):
    pass


def log(message: str) -> None:
    print(f"{time.monotonic():10.3f} {message}", flush=True)


def job_settings(results: str) -> dict[str, str]:
    settings = {}
    with open(os.path.join(results, "job.env")) as job:
        for line in job:
            key, _, value = line.rstrip("\n").partition("=")
            settings[key] = value
    return settings


class Watcher:
    """`wearfleetctl watch --json`: every record the daemon sends, kept in order."""

    def __init__(self, ctl: str, path: str):
        self.ctl = ctl
        self.path = path
        self.records: list[dict] = []
        self.process: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task | None = None

    async def start(self):
        self.process = await asyncio.create_subprocess_exec(
            self.ctl, "watch", "--json", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            limit=1 << 20,
        )
        self.reader = asyncio.create_task(self._read())

    async def _read(self):
        assert self.process and self.process.stdout
        with open(self.path, "a") as copy:
            while line := await self.process.stdout.readline():
                copy.write(line.decode(errors="replace"))
                try:
                    self.records.append(json.loads(line))
                except json.JSONDecodeError:
                    pass

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def sequences(self, address: str) -> list[int]:
        return [
            record["value"]["energy_expended_kj"]
            for record in self.records
            if record.get("kind") == "heart_rate" and record.get("device") == address
            and isinstance(record.get("value", {}).get("energy_expended_kj"), int)
        ]

    def dropped(self) -> int:
        return max([r.get("dropped", 0) for r in self.records if r.get("kind") == "dropped"], default=0)

    async def stop(self):
        if self.running:
            self.process.terminate()
            await self.process.wait()
        if self.reader:
            await self.reader


class RealStack:
    def __init__(self, work: str, results: str):
        self.work = work
        self.results_dir = results
        settings = job_settings(results)
        self.build = settings["BUILD_DIR"]
        self.wearfleetd_path = os.path.join(self.build, "wearfleetd")
        self.ctl_path = os.path.join(self.build, "wearfleetctl")
        self.link = radio.CorrectedLink()
        self.adapters: list[radio.CorrectedController] = []
        self.transports = []
        self.straps: dict[str, radio.HeartRateStrap] = {}
        self.pool: dict[str, radio.HeartRateStrap] = {}
        self.bluetoothd: asyncio.subprocess.Process | None = None
        self.bluetoothd_runs = 0
        self.wearfleetd: asyncio.subprocess.Process | None = None
        self.watcher: Watcher | None = None
        self.scenarios: list[dict] = []
        self.figures: dict[str, float | int | str] = {}

    # MARK: - Processes

    async def run(self, *command: str, check: bool = False) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        if check and process.returncode != 0:
            raise ScenarioFailed(f"{' '.join(command)} exited {process.returncode}: {err.decode().strip()}")
        return process.returncode, out.decode(), err.decode()

    async def start_bluetoothd(self):
        self.bluetoothd_runs += 1
        output = open(os.path.join(self.work, f"bluetoothd-{self.bluetoothd_runs}.log"), "w")
        # -n: stay in the foreground, logging to stderr as well as syslog.
        self.bluetoothd = await asyncio.create_subprocess_exec(BLUETOOTHD, "-n", stdout=output, stderr=output)
        output.close()
        log(f"bluetoothd started (run {self.bluetoothd_runs}, pid {self.bluetoothd.pid})")

    async def stop_bluetoothd(self, sig: int):
        assert self.bluetoothd
        self.bluetoothd.send_signal(sig)
        await asyncio.wait_for(self.bluetoothd.wait(), STEP_DEADLINE)
        log(f"bluetoothd ended by {signal.Signals(sig).name}")

    async def start_bus_monitor(self):
        """Every method call to org.bluez, and every error reply, for the whole run: the
        evidence of what the daemon asked bluetoothd and what it was told."""
        self.bus_trace_path = os.path.join(self.work, "bluez-calls.txt")
        output = open(self.bus_trace_path, "w")
        self.bus_monitor = await asyncio.create_subprocess_exec(
            "dbus-monitor", "--system", "type='method_call',destination='org.bluez'", "type='error'",
            stdout=output, stderr=asyncio.subprocess.STDOUT)
        output.close()

        async def monitoring():
            return os.path.getsize(self.bus_trace_path) > 0  # it prints its own NameAcquired first
        await self.wait_for("dbus-monitor runs", monitoring, STEP_DEADLINE)

    def bluez_calls(self) -> list[str]:
        with open(self.bus_trace_path, errors="replace") as trace:
            return [line for line in trace if line.startswith("method call") and "destination=org.bluez" in line]

    async def bluez_property(self, path: str, interface: str, name: str) -> str | None:
        # --auto-start=no: the driver must not start bluetoothd through D-Bus activation either.
        code, out, _ = await self.run("busctl", "--system", "--auto-start=no", "get-property", "org.bluez", path,
                                      f"org.bluez.{interface}", name)
        return out.strip() if code == 0 else None

    async def wait_adapters_powered(self):
        async def powered():
            for index in range(len(self.adapters)):
                if await self.bluez_property(f"/org/bluez/hci{index}", "Adapter1", "Powered") != "b true":
                    return False
            return True
        return await self.wait_for("bluetoothd powers both adapters", powered, READY_DEADLINE, interval=0.5)

    def write_configuration(self) -> str:
        lines = [
            "# Written by the real-stack tier's scenarios.py.",
            "[daemon]", 'log_level = "info"', "disconnect_on_stop = true",
            "[fleet]", 'adapters = ["hci0", "hci1"]', f"max_connections = {MAX_CONNECTIONS}",
            f"slots_per_adapter = {SLOTS_PER_ADAPTER}", 'scan_services = ["180D"]',
            "[metrics]", "enabled = false",
            "[pool]", "enabled = true", 'name_prefixes = ["HRM-pool"]', 'services = ["180D"]',
            'default_class = "strap-events"', 'min_dwell = "1s"',
        ]
        for name, address in STRAPS:
            strap_class = "strap-events" if address in START_NOTIFY else "strap-socket"
            lines += ["[[pinned]]", f'address = "{address}"', f'name = "{name}"', f'class = "{strap_class}"']
        for class_name, fd_path in (("strap-events", "false"), ("strap-socket", "true")):
            lines += [
                f"[classes.{class_name}]", 'read = ["2A19"]', 'subscribe = ["2A37"]',
                'required_services = ["180D"]', f"fd_path = {fd_path}",
            ]
        path = os.path.join(self.work, "wearfleetd.toml")
        with open(path, "w") as config:
            config.write("\n".join(lines) + "\n")
        return path

    async def start_wearfleetd(self):
        config = self.write_configuration()
        code, out, err = await self.run(self.wearfleetd_path, "--config", config, "--check-config")
        if code != 0:
            raise ScenarioFailed(f"the configuration does not check: {out}{err}")
        output = open(os.path.join(self.work, "wearfleetd.log"), "a")
        self.wearfleetd = await asyncio.create_subprocess_exec(
            self.wearfleetd_path, "--config", config, "--state-dir", os.path.join(self.work, "state"),
            "--log-format", "json", stdout=output, stderr=output)
        output.close()
        log(f"wearfleetd started (pid {self.wearfleetd.pid})")

    async def status(self) -> dict | None:
        code, out, _ = await self.run(self.ctl_path, "status", "--json")
        if code != 0:
            return None
        try:
            return json.loads(out)
        except json.JSONDecodeError:
            return None

    async def devices(self) -> dict[str, dict]:
        status = await self.status()
        return {device["address"]: device for device in (status or {}).get("devices", [])}

    async def wait_for(self, what: str, predicate, deadline: float, interval: float = 0.25, daemon_may_exit: bool = False) -> float:
        """Polls `predicate` (async, truthy when done) until `deadline` seconds pass; returns the
        seconds it took. A miss fails the scenario, naming what was awaited."""
        started = time.monotonic()
        while True:
            if await predicate():
                elapsed = time.monotonic() - started
                log(f"{what}: {elapsed:.1f} s")
                return elapsed
            if time.monotonic() - started > deadline:
                raise ScenarioFailed(f"{what}: not within {deadline:.0f} s")
            if not daemon_may_exit and self.wearfleetd is not None and self.wearfleetd.returncode is not None:
                raise ScenarioFailed(f"{what}: wearfleetd exited ({self.wearfleetd.returncode})")
            await asyncio.sleep(interval)

    async def all_pinned_ready(self) -> bool:
        devices = await self.devices()
        return all(devices.get(address, {}).get("state") == "ready" for _, address in STRAPS)

    def log_events(self, event: str) -> list[dict]:
        entries = []
        with open(os.path.join(self.work, "wearfleetd.log"), errors="replace") as daemon_log:
            for line in daemon_log:
                if f'"{event}"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if any(str(value) == event for value in entry.values()) or entry.get("metadata", {}).get("event") == event:
                    entries.append(entry)
        return entries

    # MARK: - Scenarios

    async def scenario(self, name: str, body):
        log(f"=== {name}")
        record: dict = {"name": name, "passed": False, "checks": [], "figures": {}}
        started = time.monotonic()
        try:
            await body(record)
            record["passed"] = True
        except Exception as error:  # a scenario's failure is reported, and the next one runs
            record["error"] = f"{type(error).__name__}: {error}"
            record["traceback"] = traceback.format_exc()
            record["radios"] = self.describe_radios()
            status = await self.status() or {}
            record["daemon_view"] = [f"{a['id']}: powered {a['powered']}, {a['used']} of {a['slots']} slots, discovering {a['discovering']}"
                                     for a in status.get("adapters", [])] + [
                f"{d['address']}: {d['state']} {d.get('stateReason') or ''}, last error {d.get('lastError')}"
                for d in status.get("devices", [])]
            log(f"FAILED {name}: {record['error']}")
        record["seconds"] = round(time.monotonic() - started, 1)
        self.scenarios.append(record)
        self.save()

    def describe_radios(self) -> list[str]:
        return ([adapter.describe() for adapter in self.adapters]
                + [peripheral.describe() for peripheral in [*self.straps.values(), *self.pool.values()]])

    def check(self, record: dict, condition: bool, what: str):
        record["checks"].append({"check": what, "passed": bool(condition)})
        if not condition:
            raise ScenarioFailed(what)

    def save(self, complete: bool = False):
        # `complete` only once the plan ran to its end: a driver that died midway leaves results
        # that are all passes so far, which the host must not take for a pass.
        document = {"scenarios": self.scenarios, "figures": self.figures, "complete": complete}
        with open(os.path.join(self.results_dir, "results.json.partial"), "w") as out:
            json.dump(document, out, indent=2)
        os.replace(os.path.join(self.results_dir, "results.json.partial"), os.path.join(self.results_dir, "results.json"))

    async def setup(self, record):
        for index, address in enumerate(ADAPTER_ADDRESSES):
            controller, transport = await radio.open_adapter(self.link, index, address)
            self.adapters.append(controller)
            self.transports.append(transport)
        for name, address in STRAPS:
            strap = radio.HeartRateStrap(self.link, name, address, ["180D"], NOTIFY_INTERVAL)
            await strap.start()
            self.straps[address] = strap
        for name, address in POOL:
            # Made now, heard later (the pool scenario).
            device = radio.HeartRateStrap(self.link, name, address, ["180D"], NOTIFY_INTERVAL)
            device.in_range = False
            await device.start()
            self.pool[address] = device
        await self.start_bus_monitor()
        await self.start_bluetoothd()
        record["figures"]["adapters_powered_s"] = round(await self.wait_adapters_powered(), 1)

    async def all_ready(self, record):
        started = time.monotonic()
        await self.start_wearfleetd()
        await self.wait_for("the control interface answers", lambda: self._answers(), READY_DEADLINE)
        self.watcher = Watcher(self.ctl_path, os.path.join(self.work, "watch.jsonl"))
        await self.watcher.start()
        await self.wait_for("all 8 pinned straps ready", self.all_pinned_ready, READY_DEADLINE)
        elapsed = time.monotonic() - started
        record["figures"]["all_ready_s"] = round(elapsed, 1)
        self.figures["all_ready_8_over_2_s"] = round(elapsed, 1)
        status = await self.status()
        used = {adapter["id"]: adapter["used"] for adapter in status["adapters"]}
        record["figures"]["links_per_adapter"] = used
        self.check(record, all(count <= SLOTS_PER_ADAPTER for count in used.values()),
                   f"no adapter holds more than its {SLOTS_PER_ADAPTER} slots: {used}")
        self.check(record, sum(used.values()) == 8 and all(count > 0 for count in used.values()),
                   f"the 8 links are spread over both adapters: {used}")
        links = sum(len(adapter.le_connections) for adapter in self.adapters)
        self.check(record, links == 8, f"the controllers hold 8 links: {links}")

    async def _answers(self) -> bool:
        return await self.status() is not None

    async def notifications(self, record):
        # A window of steady traffic: what every strap sends from here until it is told to stop
        # must arrive exactly once.
        window = 20.0
        marks = {address: len(strap.counters.sent) for address, strap in self.straps.items()}
        received_before = {address: len(self.watcher.sequences(address)) for address in self.straps}
        await asyncio.sleep(window)
        for strap in self.straps.values():
            strap.sending = False

        def delivered(address):
            sent = self.straps[address].counters.sent[marks[address]:]
            received = self.watcher.sequences(address)[received_before[address]:]
            return sent, received

        async def all_arrived():
            for address in self.straps:
                sent, received = delivered(address)
                if not set(sent) <= set(received):
                    return False
            return True

        try:
            await self.wait_for("every notification of the window arrives", all_arrived, STEP_DEADLINE)
        except ScenarioFailed:
            pass  # counted below
        for path, addresses in (("start_notify", START_NOTIFY), ("acquire_notify", set(self.straps) - START_NOTIFY)):
            sent_total = lost = duplicated = 0
            for address in addresses:
                sent, received = delivered(address)
                sent_total += len(sent)
                lost += len(set(sent) - set(received))
                duplicated += len(received) - len(set(received))
            record["figures"][f"{path}_sent"] = sent_total
            record["figures"][f"{path}_lost"] = lost
            record["figures"][f"{path}_duplicated"] = duplicated
            self.figures[f"notifications_{path}_sent"] = sent_total
            self.figures[f"notifications_{path}_lost"] = lost
            self.figures[f"notifications_{path}_duplicated"] = duplicated
            self.check(record, sent_total > 0, f"{path}: notifications were sent ({sent_total})")
            self.check(record, lost == 0 and duplicated == 0,
                       f"{path}: every notification counted once ({sent_total} sent, {lost} lost, {duplicated} duplicated)")
        self.check(record, self.watcher.dropped() == 0, "the watch client lost no records")
        for strap in self.straps.values():
            strap.sending = True

    async def writes(self, record):
        for name, address in (STRAPS[0], STRAPS[4]):
            strap = self.straps[address]
            code, out, err = await self.run(self.ctl_path, "write", address, radio.CONTROL_POINT, "0102")
            self.check(record, code == 0, f"{name}: write with response answered 0 ({code}: {err.strip()})")
            self.check(record, strap.counters.writes_with_response[-1:] == [b"\x01\x02"],
                       f"{name}: the peripheral got 01 02 as a Write Request")
            code, out, err = await self.run(self.ctl_path, "write", address, radio.CONTROL_POINT, "03", "--without-response")
            self.check(record, code == 0, f"{name}: write without response answered 0 ({code}: {err.strip()})")

            async def command_arrived():
                return strap.counters.writes_without_response[-1:] == [b"\x03"]
            await self.wait_for(f"{name}: the Write Command arrives", command_arrived, STEP_DEADLINE)
            rejected_before = strap.counters.writes_rejected
            code, out, err = await self.run(self.ctl_path, "write", address, radio.LOCKED_POINT, "09")
            record["figures"][f"{name}_rejected_write_message"] = err.strip()
            self.check(record, code == 1, f"{name}: a write the peripheral rejects fails (exit {code}: {err.strip()})")
            self.check(record, strap.counters.writes_rejected == rejected_before + 1,
                       f"{name}: the peripheral refused it once")
            self.check(record, "0xfc" in err.lower() or "fc" in err.lower(),
                       f"{name}: the error names the ATT error 0xFC: {err.strip()}")
            devices = await self.devices()
            self.check(record, devices[address]["state"] == "ready", f"{name}: still ready after the refused write")

    async def bluetoothd_restart(self, record, sig: int, figure: str):
        before = await self.devices()
        received_before = {address: len(self.watcher.sequences(address)) for address in self.straps}
        losses_before = len(self.log_events("link_loss_cause"))
        failures_before = len(self.log_events("failed"))
        withdrawals_before = len(self.log_events("failure_withdrawn"))
        await self.stop_bluetoothd(sig)

        async def noticed():
            status = await self.status()
            return status is not None and status["bluetoothdPresent"] is False
        await self.wait_for("wearfleetd sees bluetoothd gone", noticed, STEP_DEADLINE)
        started = time.monotonic()
        await self.start_bluetoothd()
        await self.wait_for("all 8 pinned straps ready again", self.all_pinned_ready, READY_DEADLINE)
        elapsed = time.monotonic() - started
        record["figures"]["recovery_s"] = round(elapsed, 1)
        self.figures[figure] = round(elapsed, 1)

        async def values_again():
            return all(len(self.watcher.sequences(address)) > received_before[address] for address in self.straps)
        await self.wait_for("values flow from every strap again", values_again, STEP_DEADLINE)
        after = await self.devices()
        explained = self.log_events("link_loss_cause")[losses_before:]
        record["figures"]["link_losses_explained"] = len(explained)
        # Every failure the daemon recorded from the stop until all were ready again, less the
        # ones it took back once it knew bluetoothd (or the adapter) was the cause.
        failed = self.log_events("failed")[failures_before:]
        withdrawn = self.log_events("failure_withdrawn")[withdrawals_before:]
        kept: dict[str, int] = {}
        for entry in failed:
            address = entry.get("metadata", {}).get("device_address", "?")
            kept[address] = kept.get(address, 0) + 1
        for entry in withdrawn:
            address = entry.get("metadata", {}).get("device_address", "?")
            kept[address] = kept.get(address, 0) - 1
        burned = {address: count for address, count in kept.items() if count > 0}
        record["figures"]["failures_recorded"] = len(failed)
        record["figures"]["failures_taken_back"] = len(withdrawn)
        record["figures"]["devices_with_a_failure_kept"] = burned
        self.check(record, not burned,
                   f"no link lost to the bluetoothd restart counts as a device failure: {burned or 'none'}")
        changed = {a: after[a]["lastError"] for a in self.straps
                   if after[a]["lastError"] in FAILURE_CLASSES and after[a]["lastError"] != before[a]["lastError"]}
        self.check(record, not changed, f"no device's last error changed: {changed or 'none'}")

    async def stopped_by_operator(self, record):
        # What `systemctl stop bluetooth` does: SIGTERM.
        await self.stop_bluetoothd(signal.SIGTERM)

        async def noticed():
            status = await self.status()
            return status is not None and status["bluetoothdPresent"] is False
        await self.wait_for("wearfleetd sees bluetoothd gone", noticed, STEP_DEADLINE)
        calls_before_gone = len(self.bluez_calls())
        away = 30.0
        await asyncio.sleep(away)  # the scenario: bluetoothd stays away this long
        # guest.sh points the activation file at bluetoothd, as systemd would start it: a call
        # that auto-started org.bluez would have started one.
        code, out, _ = await self.run("pgrep", "-x", "bluetoothd")
        self.check(record, code != 0, f"nothing started bluetoothd while it was stopped ({out.strip() or 'no process'})")
        status = await self.status()
        self.check(record, status["bluetoothdPresent"] is False, "wearfleetd still sees bluetoothd gone")
        call_lines = self.bluez_calls()
        calls_while_away = len(call_lines) - calls_before_gone
        record["figures"]["calls_to_org_bluez_while_away"] = calls_while_away
        record["figures"]["seconds_away"] = away
        self.figures["calls_to_org_bluez_while_stopped"] = calls_while_away
        self.check(record, calls_while_away == 0,
                   f"no call to org.bluez in {away:.0f} s without bluetoothd ({calls_while_away}: {call_lines[calls_before_gone:][:3]})")
        states = {device["state"] for device in (await self.devices()).values()}
        record["figures"]["states_while_away"] = sorted(states)
        started = time.monotonic()
        await self.start_bluetoothd()
        await self.wait_for("all 8 pinned straps ready after the restart", self.all_pinned_ready, READY_DEADLINE)
        record["figures"]["resumed_s"] = round(time.monotonic() - started, 1)

    async def out_of_range(self, record):
        name, address = STRAPS[1]
        strap = self.straps[address]
        await strap.go_out_of_range(self.adapters)

        async def not_ready():
            devices = await self.devices()
            return devices[address]["state"] != "ready"
        record["figures"]["link_loss_seen_s"] = round(await self.wait_for(f"{name} no longer ready", not_ready, STEP_DEADLINE), 1)
        away = 60.0
        await asyncio.sleep(away)  # the scenario: a minute out of range
        devices = await self.devices()
        record["figures"]["state_after_a_minute"] = devices[address]["state"]
        others_ready = all(devices[a]["state"] == "ready" for _, a in STRAPS if a != address)
        self.check(record, others_ready, "the other straps stayed ready")
        await strap.come_back()

        async def ready():
            devices = await self.devices()
            return devices[address]["state"] == "ready"
        back = await self.wait_for(f"{name} ready after it came back", ready, READY_DEADLINE)
        record["figures"]["ready_after_return_s"] = round(back, 1)
        self.figures["out_of_range_ready_after_return_s"] = round(back, 1)

    async def pool_admission(self, record):
        for device in self.pool.values():
            await device.come_back()

        async def one_admitted():
            devices = await self.devices()
            ready = [a for a in self.pool if devices.get(a, {}).get("state") == "ready"]
            return len(ready) == 1
        record["figures"]["pool_device_ready_s"] = round(
            await self.wait_for("one pool device found by its service and ready", one_admitted, READY_DEADLINE), 1)
        devices = await self.devices()
        admitted = [a for a in self.pool if devices[a]["state"] == "ready"]
        self.check(record, all(devices[a]["pinned"] is False for a in admitted), "the pool device is not pinned")
        status = await self.status()
        used = {adapter["id"]: adapter["used"] for adapter in status["adapters"]}
        record["figures"]["links_per_adapter"] = used
        self.check(record, sum(used.values()) <= MAX_CONNECTIONS and all(c <= SLOTS_PER_ADAPTER for c in used.values()),
                   f"within the slots ({MAX_CONNECTIONS} in all, {SLOTS_PER_ADAPTER} per adapter): {used}")
        await asyncio.sleep(10.0)  # the scenario: the second one keeps waiting while slots are full
        devices = await self.devices()
        waiting = [a for a in self.pool if devices.get(a, {}).get("state") != "ready"]
        self.check(record, len(waiting) == 1, f"the other pool device waits for a slot: {waiting}")
        links = sum(len(adapter.le_connections) for adapter in self.adapters)
        self.check(record, links <= MAX_CONNECTIONS, f"the controllers hold at most {MAX_CONNECTIONS} links: {links}")
        self.admitted_pool = admitted[0]
        self.waiting_pool = waiting[0]

    async def temporary_device(self, record):
        # The waiting pool device was only ever seen, never connected: bluetoothd keeps it as a
        # temporary device and removes it TemporaryTimeout (30 s) after it was last seen.
        waiting = self.pool[self.waiting_pool]
        path = "/org/bluez/hci{}/dev_" + self.waiting_pool.replace(":", "_")

        async def exported():
            for index in range(len(self.adapters)):
                if await self.bluez_property(path.format(index), "Device1", "Address") is not None:
                    return True
            return False
        self.check(record, await exported(), "bluetoothd has an object for the waiting pool device")
        await waiting.go_out_of_range(self.adapters)

        async def removed():
            return not await exported()
        gone = await self.wait_for("bluetoothd removes the silent temporary device", removed, 180.0, interval=1.0)
        record["figures"]["removed_after_s"] = round(gone, 1)
        await waiting.come_back()
        await self.pool[self.admitted_pool].go_out_of_range(self.adapters)

        async def ready():
            devices = await self.devices()
            return devices.get(self.waiting_pool, {}).get("state") == "ready"
        record["figures"]["ready_after_return_s"] = round(
            await self.wait_for("the removed device is found again and connected", ready, READY_DEADLINE), 1)

    async def clean_stop(self, record):
        if self.watcher:
            await self.watcher.stop()
        self.wearfleetd.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.wearfleetd.wait(), STEP_DEADLINE)
        self.check(record, code == 0, f"wearfleetd exits 0 on SIGTERM ({code})")

        async def no_links():
            return sum(len(adapter.le_connections) for adapter in self.adapters) == 0
        await self.wait_for("no link is left up", no_links, STEP_DEADLINE, daemon_may_exit=True)

    async def main(self, only: set[str]) -> int:
        """Runs the scenarios in order; `only` (job.env SCENARIOS=key,key) picks some of them,
        for a developer chasing one behaviour. Setup and the first connection always run."""
        plan = [
            ("setup", "setup: two adapters, ten peripherals, bluetoothd", self.setup),
            ("ready", "8 pinned straps over 2 adapters: all ready, links spread", self.all_ready),
            ("notifications", "every notification counted once, StartNotify and AcquireNotify", self.notifications),
            ("writes", "writes with and without response, and one the peripheral rejects", self.writes),
            ("sigterm", "bluetoothd SIGTERM and restart",
             lambda record: self.bluetoothd_restart(record, signal.SIGTERM, "recovery_sigterm_s")),
            ("sigkill", "bluetoothd SIGKILL and restart",
             lambda record: self.bluetoothd_restart(record, signal.SIGKILL, "recovery_sigkill_s")),
            ("stopped", "bluetoothd stopped for 30 s: not started again, no calls, resumed", self.stopped_by_operator),
            ("range", "a strap out of range for a minute comes back", self.out_of_range),
            ("pool", "pool devices found by service, connected within the slots", self.pool_admission),
            ("temporary", "an unbonded device after TemporaryTimeout", self.temporary_device),
            ("stop", "stop leaves no link up", self.clean_stop),
        ]
        for key, title, body in plan:
            if only and key not in only and key not in ("setup", "ready", "stop"):
                continue
            if key == "temporary" and not getattr(self, "waiting_pool", None):
                continue  # it takes the pool scenario's waiting device
            await self.scenario(title, body)
            if key in ("setup", "ready") and not self.scenarios[-1]["passed"]:
                break
        self.save(complete=True)
        self.completed = True
        return 0 if all(s["passed"] for s in self.scenarios) else 1


async def amain(arguments) -> int:
    stack = RealStack(arguments.work, arguments.results)
    only = {key for key in job_settings(arguments.results).get("SCENARIOS", "").split(",") if key}
    try:
        return await stack.main(only)
    finally:
        stack.save(complete=getattr(stack, "completed", False))
        for process in (stack.wearfleetd, stack.bluetoothd, getattr(stack, "bus_monitor", None)):
            if process is not None and process.returncode is None:
                process.kill()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--results", required=True)
    arguments = parser.parse_args()
    os.makedirs(arguments.work, exist_ok=True)
    logging.basicConfig(level=logging.WARNING, stream=sys.stdout,
                        format="%(relativeCreated)10.0f %(name)s %(levelname)s %(message)s")
    logging.getLogger("realstack").setLevel(logging.INFO)
    sys.exit(asyncio.run(amain(arguments)))


if __name__ == "__main__":
    main()
