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
import datetime
import json
import math
import logging
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measurement  # noqa: E402
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
# Measurement devices (the measurement scenario; pinned at run time when it starts): a cuff and a
# scale that bond and wake to measure, and a cuff whose passkey in the daemon's file is wrong.
# The wake schedule is what the scenario is about: awake at most `awake` s, then `asleep` s.
CUFF = ("cuff-1", "C0:FF:EE:00:02:01")
SCALE = ("scale-1", "C0:FF:EE:00:02:02")
WRONG_CUFF = ("cuff-2", "C0:FF:EE:00:02:03")
CUFF_PASSKEY = 123456
WRONG_CUFF_PASSKEY = 654321
WRONG_CUFF_PASSKEY_IN_FILE = 111111
CUFF_WAKES = 10
# One of the cuff's sleeps outlasts bluetoothd's pending Connect (~40 s): the daemon must send the
# next one without counting anything, and catch the wake after it.
LONG_SLEEP_AFTER_WAKE = 5
LONG_SLEEP = 55.0
MEASUREMENT_SCHEDULES = {
    CUFF[1]: dict(records_per_wake=3, awake=30.0, asleep=12.0, first_wake_after=1.0,
                  longer_sleeps={LONG_SLEEP_AFTER_WAKE: LONG_SLEEP}),
    SCALE[1]: dict(records_per_wake=2, awake=30.0, asleep=15.0, first_wake_after=4.0),
    WRONG_CUFF[1]: dict(records_per_wake=3, awake=15.0, asleep=12.0, first_wake_after=7.0),
}


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

    def values(self, address: str, kind: str) -> list[dict]:
        return [record for record in self.records if record.get("kind") == kind and record.get("device") == address]

    def states(self, address: str) -> list[dict]:
        return [record for record in self.records if record.get("kind") == "state" and record.get("device") == address]

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
        self.measurement_devices: dict[str, measurement.MeasurementDevice] = {}
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
        started = self.bluetoothd

        # The scenarios stop and kill this process: it must be the one on the bus. (Once, on a
        # loaded machine, a bluetoothd D-Bus activation had started won the name first and this
        # one exited "Name already in use"; the restart scenarios then found no process to stop.)
        async def owns_the_name():
            if started.returncode is not None:
                raise ScenarioFailed(f"bluetoothd (pid {started.pid}) exited {started.returncode} before it owned org.bluez")
            return await self.bluez_owner_pid() == started.pid
        await self.wait_for("bluetoothd owns org.bluez", owns_the_name, STEP_DEADLINE)

    async def bluez_owner_pid(self) -> int | None:
        """The pid of the process that owns org.bluez, asked of the bus itself (which never starts
        a service for a question about a name), or None while nobody does."""
        code, out, _ = await self.run(
            "dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.bluez")
        if code != 0:
            return None
        words = out.split()
        return int(words[-1]) if words and words[-1].isdigit() else None

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

    def bluez_trace(self) -> list[dict]:
        """The bus trace's method calls and error replies, parsed: `kind` (call, error), `time`
        (wall clock), `sender`, `destination`, `serial`, `reply_serial`, `path`, `member`,
        `error_name`, `text` (an error's message)."""
        entries: list[dict] = []
        with open(self.bus_trace_path, errors="replace") as trace:
            for line in trace:
                if line.startswith(("method call ", "error ")):
                    entry = {"kind": "call" if line.startswith("method call") else "error"}
                    for field in line.replace(";", " ").split():
                        key, _, value = field.partition("=")
                        if value and key in ("time", "sender", "destination", "serial", "reply_serial", "path",
                                             "member", "error_name"):
                            entry[key] = float(value) if key == "time" else value
                    entries.append(entry)
                elif entries and entries[-1]["kind"] == "error" and "text" not in entries[-1] and line.strip().startswith("string "):
                    entries[-1]["text"] = line.strip()[len("string "):].strip('"')
        return entries

    def bluez_calls(self) -> list[str]:
        with open(self.bus_trace_path, errors="replace") as trace:
            return [line for line in trace if line.startswith("method call") and "destination=org.bluez" in line]

    async def bluez_property(self, path: str, interface: str, name: str) -> str | None:
        # The driver must not start bluetoothd through D-Bus activation: nothing is asked of
        # org.bluez while nobody owns it (busctl's --auto-start=no is not enough: a get-property
        # it sent while the scenario's bluetoothd was still starting was held for an activated one).
        if await self.bluez_owner_pid() is None:
            return None
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
            "[pairing]", 'capability = "KeyboardDisplay"', f'passkeys_file = "{self.write_passkeys()}"',
        ]
        for name, address in STRAPS:
            strap_class = "strap-events" if address in START_NOTIFY else "strap-socket"
            lines += ["[[pinned]]", f'address = "{address}"', f'name = "{name}"', f'class = "{strap_class}"']
        for class_name, fd_path in (("strap-events", "false"), ("strap-socket", "true")):
            lines += [
                f"[classes.{class_name}]", 'read = ["2A19"]', 'subscribe = ["2A37"]',
                'required_services = ["180D"]', f"fd_path = {fd_path}",
            ]
        for class_name, service, characteristic in (("cuff", "1810", "2A35"), ("scale", "181D", "2A9D")):
            lines += [
                f"[classes.{class_name}]", f'subscribe = ["{characteristic}"]', f'required_services = ["{service}"]',
                "bond = true", "intermittent = true", "set_time = true",
            ]
        path = os.path.join(self.work, "wearfleetd.toml")
        with open(path, "w") as config:
            config.write("\n".join(lines) + "\n")
        return path

    def write_passkeys(self) -> str:
        """The daemon's passkeys file: the cuff's own passkey, and a wrong one for the other cuff."""
        path = os.path.join(self.work, "passkeys")
        with open(path, "w") as passkeys:
            passkeys.write("# Written by the real-stack tier's scenarios.py.\n")
            passkeys.write(f"{CUFF[1]} {CUFF_PASSKEY:06d}\n")
            passkeys.write(f"# {WRONG_CUFF[0]} shows {WRONG_CUFF_PASSKEY:06d}: this one is wrong on purpose\n")
            passkeys.write(f"{WRONG_CUFF[1]} {WRONG_CUFF_PASSKEY_IN_FILE:06d}\n")
        return path

    async def start_wearfleetd(self):
        config = self.write_configuration()
        code, out, err = await self.run(self.wearfleetd_path, "--config", config, "--check-config")
        if code != 0:
            raise ScenarioFailed(f"the configuration does not check: {out}{err}")
        output = open(os.path.join(self.work, "wearfleetd.log"), "a")
        environment = dict(os.environ)
        if job_settings(self.results_dir).get("RECORD_INPUTS") == "1":
            # Every machine input in the log (job.env RECORD_INPUTS=1): `wearfleetctl replay
            # wearfleetd.log` re-runs the machines.
            environment["WEARFLEET_RECORD_INPUTS"] = "1"
        self.wearfleetd = await asyncio.create_subprocess_exec(
            self.wearfleetd_path, "--config", config, "--state-dir", os.path.join(self.work, "state"),
            "--log-format", "json", stdout=output, stderr=output, env=environment)
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
                + [peripheral.describe() for peripheral in [*self.straps.values(), *self.pool.values(),
                                                            *self.measurement_devices.values()]])

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
        # Made now, asleep (no schedule) until the measurement scenario.
        for device in (
            measurement.BloodPressureCuff(self.link, *CUFF, CUFF_PASSKEY, **MEASUREMENT_SCHEDULES[CUFF[1]]),
            measurement.WeightScale(self.link, *SCALE, **MEASUREMENT_SCHEDULES[SCALE[1]]),
            measurement.BloodPressureCuff(self.link, *WRONG_CUFF, WRONG_CUFF_PASSKEY, **MEASUREMENT_SCHEDULES[WRONG_CUFF[1]]),
        ):
            await device.start()
            self.measurement_devices[str(device.address).split("/")[0]] = device
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

    # MARK: - Measurement devices

    async def measurement_devices_scenario(self, record):
        cuff = self.measurement_devices[CUFF[1]]
        scale = self.measurement_devices[SCALE[1]]
        wrong = self.measurement_devices[WRONG_CUFF[1]]
        names = {address: name for name, address in (CUFF, SCALE, WRONG_CUFF)}
        failures_before = len(self.log_events("failed"))
        # Each sleeping device keeps a slot for its wake (its pending Connect stands there), and
        # the two 5-link controllers hold 10: 8 straps and 3 measurement devices do not fit. The
        # operator makes room as on a ward, holding one strap disconnected (`disconnect`) for
        # the scenario and letting it go (`reconnect`) after.
        held_name, held_address = STRAPS[-1]
        code, _, err = await self.run(self.ctl_path, "disconnect", held_address)
        self.check(record, code == 0, f"{held_name} held disconnected to make room ({code}{': ' + err.strip() if err.strip() else ''})")

        async def held_unlinked():
            return not any(str(peer).startswith(held_address) for adapter in self.adapters
                           for peer in adapter.le_connections)
        await self.wait_for(f"{held_name}'s link down", held_unlinked, STEP_DEADLINE)
        for name, address in (CUFF, SCALE, WRONG_CUFF):
            device_class = "scale" if address == SCALE[1] else "cuff"
            code, _, err = await self.run(self.ctl_path, "pin", address, "--class", device_class, "--name", name)
            self.check(record, code == 0, f"{name} pinned (at run time), class {device_class} ({code}{': ' + err.strip() if err.strip() else ''})")
        # The most links each adapter holds meanwhile, as its controller and as the daemon count them.
        most_links: dict[str, dict[str, int]] = {"controllers": {}, "daemon": {}}
        sampler = asyncio.create_task(self._sample_links(most_links))
        try:
            for device in self.measurement_devices.values():
                device.start_schedule()
            sleeping = await self._cuff_wakes(cuff)
        finally:
            for device in self.measurement_devices.values():
                device.stop_schedule()
            sampler.cancel()
        record["figures"]["most_links_on_controllers"] = most_links["controllers"]
        record["figures"]["most_links_daemon_used"] = most_links["daemon"]
        over = {adapter: count for adapter, count in most_links["controllers"].items() if count > SLOTS_PER_ADAPTER}
        # A sleeping device's pending Connect is placed by the fleet gate where a slot is free and
        # holds it (NOTES.md): no adapter may hold more links than slots_per_adapter.
        record["figures"]["links_over_slots_per_adapter"] = (
            {adapter: f"{count} of {SLOTS_PER_ADAPTER}" for adapter, count in over.items()} or "none")
        self.figures["measurement_links_over_slots_per_adapter"] = record["figures"]["links_over_slots_per_adapter"]
        self.check(record, not over, f"no adapter held more links than slots_per_adapter ({SLOTS_PER_ADAPTER}): "
                   f"controllers {most_links['controllers']}, the daemon's count {most_links['daemon']}")

        async def all_asleep():
            return not any(device.awake for device in self.measurement_devices.values())
        await self.wait_for("every measurement device asleep", all_asleep, max(d.awake_window for d in self.measurement_devices.values()) + STEP_DEADLINE)

        async def all_delivered():
            return all(not self._unreceived(device) for device in (cuff, scale))
        try:
            await self.wait_for("every confirmed record in the watch", all_delivered, STEP_DEADLINE)
        except ScenarioFailed:
            pass  # counted below
        devices = await self.devices()
        failed = [entry for entry in self.log_events("failed")[failures_before:]
                  if entry.get("metadata", {}).get("device_address") in names]
        trace = self.bluez_trace()
        self._check_measurement_device(record, cuff, devices, failed, sleeping)
        self._check_long_sleep(record, cuff, trace)
        self._check_measurement_device(record, scale, devices, failed, None)
        self._check_wrong_passkey(record, wrong, devices, failed, trace)
        self._measurement_figures(record, cuff, scale, wrong, devices, trace)

        # The wrong cuff gave up and gave its slot back: the held strap has one again.
        code, _, err = await self.run(self.ctl_path, "reconnect", held_address)
        self.check(record, code == 0, f"{held_name} let go ({code}{': ' + err.strip() if err.strip() else ''})")

        async def held_ready():
            return (await self.devices()).get(held_address, {}).get("state") == "ready"
        record["figures"]["held_strap_ready_again_s"] = round(
            await self.wait_for(f"{held_name} ready again", held_ready, READY_DEADLINE), 1)

    async def _sample_links(self, most: dict[str, dict[str, int]]):
        next_status = 0.0
        while True:
            for index, adapter in enumerate(self.adapters):
                name = f"hci{index}"
                most["controllers"][name] = max(most["controllers"].get(name, 0), len(adapter.le_connections))
            if time.monotonic() >= next_status:
                next_status = time.monotonic() + 1.0
                for adapter in (await self.status() or {}).get("adapters", []):
                    most["daemon"][adapter["id"]] = max(most["daemon"].get(adapter["id"], 0), adapter["used"])
            await asyncio.sleep(0.1)

    async def _cuff_wakes(self, cuff) -> list[dict]:
        """Follows the cuff through its wakes; during each sleep, what the daemon shows of it."""
        sleeping = []
        for wake in range(1, CUFF_WAKES + 1):
            async def wake_over():
                return len(cuff.counters.slept_at) >= wake
            slept_before = cuff.first_wake_after if wake == 1 else cuff.sleep_after(wake - 1)
            await self.wait_for(f"{CUFF[0]}: wake {wake} over", wake_over,
                                slept_before + cuff.awake_window + STEP_DEADLINE, interval=0.5)
            if wake == CUFF_WAKES:
                for device in self.measurement_devices.values():
                    device.stop_schedule()
            # The daemon should show it asleep, its last value's time kept, well before it wakes.
            view = {"wake": wake, "state": None, "lastValueTime": None, "lastError": None, "retryAttempt": None}
            deadline = time.monotonic() + cuff.sleep_after(wake) - 2.0
            while time.monotonic() < deadline:
                device = (await self.devices()).get(CUFF[1], {})
                view.update({key: device.get(key) for key in ("state", "lastValueTime", "lastError", "retryAttempt")})
                if view["state"] == "asleep":
                    break
                await asyncio.sleep(0.25)
            log(f"{CUFF[0]} after wake {wake}: {view}")
            sleeping.append(view)
        return sleeping

    def _unreceived(self, device) -> list:
        received = {device.watch_key(value) for value in self.watcher.values(self._address(device), device.kind)}
        return [record.key for record in device.counters.confirmed if record.key not in received]

    @staticmethod
    def _address(device) -> str:
        return str(device.address).split("/")[0]

    @staticmethod
    def _watch_time(value: dict) -> float:
        return datetime.datetime.fromisoformat(value["time"].replace("Z", "+00:00")).timestamp()

    def _check_measurement_device(self, record, device, devices, failed, sleeping):
        address = self._address(device)
        name = device.name
        counters = device.counters
        # Every measurement received exactly once.
        received: dict[tuple, int] = {}
        for value in self.watcher.values(address, device.kind):
            key = device.watch_key(value)
            received[key] = received.get(key, 0) + 1
        taken = {r.key for r in counters.taken}
        missing = [key for key in taken if key not in received]
        duplicated = sum(count - 1 for count in received.values() if count > 1)
        unexpected = [key for key in received if key not in taken]
        # The daemon's pending Connect caught every wake.
        without = [wake for wake in range(1, counters.wakes + 1)
                   if not any(link.wake == wake and link.confirmed for link in counters.links)]
        self.check(record, counters.wakes >= 2 and not without,
                   f"{name}: a session with records at each of its {counters.wakes} wakes "
                   f"({len(counters.links)} sessions; none at wakes {without or 'none'})")
        self.check(record, not missing and duplicated == 0 and not unexpected and not device.queue,
                   f"{name}: every measurement received exactly once ({len(counters.taken)} taken, "
                   f"{len(counters.confirmed)} confirmed, {sum(received.values())} received; missing {missing}, "
                   f"duplicated {duplicated}, unexpected {unexpected}, still queued {len(device.queue)})")
        # Bonded once; every later wake reconnects with the stored key.
        self.check(record, counters.pairings == 1 and counters.pairing_starts == 1 and not counters.pairing_failures,
                   f"{name}: bonded once ({counters.pairing_starts} pairings started, {counters.pairings} completed, "
                   f"failures {counters.pairing_failures})")
        # The clock: one write per session, after bonding; records after the first write on time.
        writes = [len(link.clock_writes) for link in counters.links]
        self.check(record, writes and all(count == 1 for count in writes),
                   f"{name}: one Current Time write per session ({writes})")
        first_link = counters.links[0] if counters.links else None
        first_write = counters.clock_writes[0][0] if counters.clock_writes else None
        self.check(record, first_link is not None and first_link.paired_at is not None and first_write is not None
                   and first_write > first_link.paired_at,
                   f"{name}: the first clock write came after bonding")
        late, wrong_before = [], []
        for taken_record in counters.taken:
            stamp = datetime.datetime.fromisoformat(taken_record.stamp)
            if first_write is not None and taken_record.taken_at > first_write:
                local = datetime.datetime.fromtimestamp(taken_record.taken_at)
                if abs((stamp - local).total_seconds()) > 5.0:
                    late.append((taken_record.number, taken_record.stamp))
            elif stamp.year != measurement.CLOCK_START.year:
                wrong_before.append((taken_record.number, taken_record.stamp))
        after = sum(1 for r in counters.taken if first_write is not None and r.taken_at > first_write)
        self.check(record, after > 0 and not late and not wrong_before,
                   f"{name}: the {after} records taken after the first clock write carry the gateway's time "
                   f"(off: {late or 'none'}), the {len(counters.taken) - after} before it the unset clock")
        # No failure, no budget.
        own_failures = [entry.get("metadata", {}).get("error_class") for entry in failed
                        if entry.get("metadata", {}).get("device_address") == address]
        status = devices.get(address, {})
        self.check(record, not own_failures and status.get("lastError") is None and not status.get("retryAttempt"),
                   f"{name}: no failure counted (failed events {own_failures or 'none'}, last error "
                   f"{status.get('lastError')}, retry attempt {status.get('retryAttempt')})")
        # Asleep between wakes: a state record `asleep` after each session's end, before the next wake.
        states = self.watcher.states(address)
        missed = []
        for index in range(len(counters.slept_at)):
            if index + 1 >= len(counters.advertising_started):
                break
            wake_links = [link for link in counters.links if link.wake == index + 1 and link.ended_at]
            start = wake_links[-1].ended_at if wake_links else counters.slept_at[index]
            end = counters.advertising_started[index + 1]
            if not any(state.get("state") == "asleep" and start <= self._watch_time(state) <= end for state in states):
                missed.append(index + 1)
        self.check(record, not missed, f"{name}: the daemon showed it asleep between wakes (not after wakes {missed or 'none'})")
        self.check(record, status.get("state") == "asleep" and status.get("lastValueTime") is not None,
                   f"{name}: asleep at the end with its last value's time ({status.get('state')}, {status.get('lastValueTime')})")
        if sleeping is not None:
            odd = [view for view in sleeping if view["state"] != "asleep" or view["lastValueTime"] is None
                   or view["lastError"] is not None]
            self.check(record, not odd, f"{name}: status during each of its {len(sleeping)} sleeps: asleep, "
                                        f"last value time set, no last error ({odd or 'all so'})")

    @staticmethod
    def _device_calls(trace: list[dict], address: str, member: str) -> list[dict]:
        suffix = "/dev_" + address.replace(":", "_")
        return [entry for entry in trace if entry["kind"] == "call" and entry.get("member") == member
                and entry.get("path", "").endswith(suffix)]

    @staticmethod
    def _replies(trace: list[dict], calls: list[dict]) -> list[str]:
        """The error replies to `calls`, as `name: text`."""
        asked = {(call.get("sender"), call.get("serial")) for call in calls}
        return [f"{entry.get('error_name')}: {entry.get('text')}" for entry in trace
                if entry["kind"] == "error" and (entry.get("destination"), entry.get("reply_serial")) in asked]

    def _check_long_sleep(self, record, device, trace):
        """The sleep after wake LONG_SLEEP_AFTER_WAKE outlasts bluetoothd's pending Connect."""
        counters = device.counters
        wake = LONG_SLEEP_AFTER_WAKE
        if len(counters.advertising_started) <= wake:
            self.check(record, False, f"{device.name}: woke after its long sleep")
        links = [link for link in counters.links if link.wake == wake and link.ended_at]
        start = links[-1].ended_at if links else counters.slept_at[wake - 1]
        end = counters.advertising_started[wake]
        connects = [call for call in self._device_calls(trace, self._address(device), "Connect")
                    if start <= call["time"] <= end]
        endings = self._replies(trace, connects)
        record["figures"][f"{device.name}_long_sleep_s"] = round(end - start, 1)
        record["figures"][f"{device.name}_long_sleep_connects"] = len(connects)
        record["figures"][f"{device.name}_long_sleep_connect_endings"] = endings
        self.check(record, len(connects) >= 2 and endings,
                   f"{device.name}: through a {end - start:.0f} s sleep bluetoothd ended the pending Connect "
                   f"({endings or 'no error reply'}) and the daemon sent it again ({len(connects)} Connects), "
                   f"nothing counted, the next wake caught")

    def _check_wrong_passkey(self, record, device, devices, failed, trace):
        address = self._address(device)
        name = device.name
        counters = device.counters
        status = devices.get(address, {})
        own = [entry.get("metadata", {}) for entry in failed if entry.get("metadata", {}).get("device_address") == address]
        self.check(record, counters.wakes >= 3, f"{name}: woke {counters.wakes} times (at least 3)")
        self.check(record, counters.pairing_starts == 1 and len(counters.pairing_failures) == 1,
                   f"{name}: one pairing attempt at the device over {counters.wakes} wakes, failed "
                   f"({counters.pairing_starts} started, failures {counters.pairing_failures})")
        self.check(record, len(own) == 1 and own[0].get("error_class") == "pairing"
                   and "AuthenticationFailed" in own[0].get("bluez_error", ""),
                   f"{name}: one failure logged, class pairing, AuthenticationFailed "
                   f"({[(m.get('error_class'), m.get('bluez_error')) for m in own]})")
        self.check(record, status.get("state") == "suspended" and str(status.get("stateReason", "")).startswith("gaveUp")
                   and status.get("lastError") == "pairing",
                   f"{name}: suspended, gave up, last error pairing ({status.get('state')}, {status.get('stateReason')}, "
                   f"{status.get('lastError')})")
        self.check(record, not counters.confirmed and not counters.clock_writes
                   and not self.watcher.values(address, device.kind),
                   f"{name}: nothing delivered, no clock write ({len(counters.confirmed)} confirmed, "
                   f"{len(counters.clock_writes)} clock writes)")
        pairs = self._device_calls(trace, address, "Pair")
        connects_after = [call for call in self._device_calls(trace, address, "Connect")
                          if pairs and call["time"] > pairs[0]["time"]]
        record["figures"][f"{name}_pair_calls"] = len(pairs)
        record["figures"][f"{name}_pair_replies"] = self._replies(trace, pairs)
        self.check(record, len(pairs) == 1 and not connects_after,
                   f"{name}: the daemon asked bluetoothd to pair once and never connected it again "
                   f"({len(pairs)} Pair calls, {len(connects_after)} Connects after it)")

    def _measurement_figures(self, record, cuff, scale, wrong, devices, trace):
        figures = record["figures"]

        def percentile(values: list[float], p: float) -> float | None:
            if not values:
                return None
            ordered = sorted(values)
            return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)], 2)

        all_latencies = []
        for device in (cuff, scale):
            counters = device.counters
            first_seen: dict[tuple, float] = {}
            for value in self.watcher.values(self._address(device), device.kind):
                first_seen.setdefault(device.watch_key(value), self._watch_time(value))
            latencies, to_link = [], []
            for wake, advertised in enumerate(counters.advertising_started, start=1):
                links = [link for link in counters.links if link.wake == wake]
                if links:
                    to_link.append(links[0].connected_at - advertised)
                times = [first_seen[r.key] for r in counters.confirmed
                         if r.key in first_seen and any(r.link == link.number for link in links)]
                if times:
                    latencies.append(min(times) - advertised)
            all_latencies += latencies
            prefix = device.name
            figures[f"{prefix}_wakes"] = counters.wakes
            figures[f"{prefix}_sessions"] = len(counters.links)
            figures[f"{prefix}_adv_to_first_value_s"] = [round(x, 2) for x in latencies]
            figures[f"{prefix}_adv_to_first_value_p50_s"] = percentile(latencies, 50)
            figures[f"{prefix}_adv_to_first_value_p99_s"] = percentile(latencies, 99)
            figures[f"{prefix}_adv_to_connected_p50_s"] = percentile(to_link, 50)
            figures[f"{prefix}_sent_confirmed"] = len(counters.confirmed)
            figures[f"{prefix}_received"] = len(self.watcher.values(self._address(device), device.kind))
            figures[f"{prefix}_adapters"] = sorted({value.get("adapter") for value in
                                                    self.watcher.values(self._address(device), device.kind)} - {None})
            figures[f"{prefix}_clock_writes"] = len(counters.clock_writes)
            figures[f"{prefix}_pair_calls"] = len(self._device_calls(trace, self._address(device), "Pair"))
            figures[f"{prefix}_last_clock_written"] = counters.last_clock_written
            paired = next((link for link in counters.links if link.paired_at and link.pairing_started_at), None)
            if paired:
                figures[f"{prefix}_pairing_at_device_s"] = round(paired.paired_at - paired.pairing_started_at, 2)
            # The daemon's side: from its `pairing` state to the state after it (watch records).
            states = self.watcher.states(self._address(device))
            for index, state in enumerate(states[:-1]):
                if state.get("state") == "pairing":
                    figures[f"{prefix}_pairing_state_s"] = round(
                        self._watch_time(states[index + 1]) - self._watch_time(state), 2)
                    break
        wrong_status = devices.get(self._address(wrong), {})
        figures[f"{wrong.name}_wakes"] = wrong.counters.wakes
        figures[f"{wrong.name}_sessions"] = len(wrong.counters.links)
        figures[f"{wrong.name}_pairings_started"] = wrong.counters.pairing_starts
        figures[f"{wrong.name}_pairing_failures"] = wrong.counters.pairing_failures
        wrong_outcome = (f"{wrong_status.get('state')}/{wrong_status.get('stateReason')}, last error "
                         f"{wrong_status.get('lastError')}, {wrong.counters.pairing_starts} pairing in "
                         f"{wrong.counters.wakes} wakes")
        self.figures["measurement_adv_to_first_value_p50_s"] = percentile(all_latencies, 50)
        self.figures["measurement_adv_to_first_value_p99_s"] = percentile(all_latencies, 99)
        self.figures["measurement_cuff_sent_received"] = f"{len(cuff.counters.confirmed)}/{figures[f'{cuff.name}_received']}"
        self.figures["measurement_scale_sent_received"] = f"{len(scale.counters.confirmed)}/{figures[f'{scale.name}_received']}"
        self.figures["measurement_cuff_first_pairing_at_device_s"] = figures.get(f"{cuff.name}_pairing_at_device_s")
        self.figures["measurement_cuff_pairing_state_s"] = figures.get(f"{cuff.name}_pairing_state_s")
        self.figures["measurement_clock_writes"] = (f"cuff {len(cuff.counters.clock_writes)} in {len(cuff.counters.links)} sessions, "
                                                    f"scale {len(scale.counters.clock_writes)} in {len(scale.counters.links)}")
        self.figures["measurement_wrong_passkey"] = wrong_outcome

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
            ("setup", "setup: two adapters, thirteen peripherals, bluetoothd", self.setup),
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
            ("measurement", f"a cuff and a scale that bond and wake to measure ({CUFF_WAKES} cuff wakes), a wrong passkey",
             self.measurement_devices_scenario),
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
        watcher = getattr(stack, "watcher", None)
        for process in (stack.wearfleetd, stack.bluetoothd, getattr(stack, "bus_monitor", None),
                        getattr(watcher, "process", None)):
            if process is not None and process.returncode is None:
                process.kill()
                # Reaped while the loop runs: asyncio's child watcher waits in a daemon thread,
                # which otherwise reports the exit to a closed loop, logging while the interpreter
                # shuts down (once, loaded: "Fatal Python error: _enter_buffered_busy", the driver
                # aborted after every scenario had passed).
                try:
                    await asyncio.wait_for(process.wait(), timeout=10)
                except asyncio.TimeoutError:
                    log(f"pid {process.pid} did not exit within 10 s of SIGKILL")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--results", required=True)
    arguments = parser.parse_args()
    os.makedirs(arguments.work, exist_ok=True)
    logging.basicConfig(level=logging.WARNING, stream=sys.stdout,
                        format="%(relativeCreated)10.0f %(name)s %(levelname)s %(message)s")
    logging.getLogger("realstack").setLevel(logging.INFO)
    status = asyncio.run(amain(arguments))
    # The results are saved: leave without the interpreter's shutdown, where a daemon thread
    # still writing (a child watcher's, bumble's) can abort the process and fail a passed run.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
