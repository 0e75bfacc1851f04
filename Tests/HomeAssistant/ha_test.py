#!/usr/bin/env python3
"""The Home Assistant tier (run by ha-test.sh, in .build-ha-venv).

A private mosquitto on a free loopback port, a private dbus-daemon with bluez-sim (four
heart-rate straps, scenario.json), wearfleetd publishing to the broker (four straps pinned, the
pool on) and a headless Home Assistant Core with the MQTT integration on that broker. The run:
values flow; buttons and the hold switch are pressed through the REST API; wearfleetd is SIGKILLed
and started again; Home Assistant restarts; a reload unpins a strap (the pool keeps it), a second
reload removes it from the fleet; a third pins a sleeping cuff, woken once to measure; Home
Assistant restarts while it sleeps; no value message is published twice over the run; Home
Assistant's log is read. Every assertion reads Home Assistant (REST /api/states,
/api/history/period, the websocket's registries), the broker (an observer subscribed to '#'),
the simulator (org.wearfleet.Simulator1) or wearfleetctl.

One line per check on stdout; figures and checks in WORK/results.json. Exit 0 when every check
passed, 1 otherwise. Never a sleep as synchronization: every wait polls for its condition under
a generous timeout, and no check asserts a duration.
"""

import argparse
import asyncio
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone

import aiohttp
import paho.mqtt.client as mqtt

HERE = os.path.dirname(os.path.abspath(__file__))
GATEWAY = "hatest"
STRAPS = ["C0:FF:EE:4A:00:01", "C0:FF:EE:4A:00:02", "C0:FF:EE:4A:00:03", "C0:FF:EE:4A:00:04"]
NAMES = {a: f"HA Strap {i + 1}" for i, a in enumerate(STRAPS)}
# The strap whose buttons are pressed, and the one the reloads unpin and then remove.
PRESSED = STRAPS[1]
LEAVING = STRAPS[3]
CONNECTION_STATES = [
    "idle", "asleep", "resolving", "connecting", "discovering", "pairing", "ready", "degraded", "backingOff", "suspended"]
# A blood-pressure cuff that sleeps until the run wakes it (bonded already in scenario.json), added
# by a reload in the last section so that the straps' sections see the fleet they always had.
CUFF = "C0:FF:EE:4A:00:05"
CUFF_OBJECTS = ["systolic", "diastolic", "pulse", "last_measurement"]
OBJECTS = ["heart_rate", "battery", "connection"]
# What a line of Home Assistant's log must mention to be counted as caused by wearfleetd's messages.
# (A record counts with its traceback: one through the MQTT integration counts.)
WEARFLEET_CAUSED = re.compile(
    r"mqtt|template|value_json|wearfleet|C0FFEE4A|homeassistant/(?:status|sensor/|binary_sensor/|button/|switch/)", re.IGNORECASE)
# Home Assistant's entities made from wearfleetd's discovery (object_id wearfleet_…).
WEARFLEET_ENTITY = re.compile(r"^[a-z_]+\.wearfleet_")
# What a line must mention to count as Home Assistant trying the network.
NETWORK_ATTEMPT = re.compile(
    r"ClientConnectorError|Cannot connect to host|Name or service not known|Temporary failure in name resolution"
    r"|Network is unreachable|getaddrinfo|ServerDisconnectedError|ssl:default|https?://(?!127\.0\.0\.1|localhost)",
    re.IGNORECASE)
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


def seg(address):
    """The topic segment: upper case without colons."""
    return address.replace(":", "").upper()


def entity(domain, address, obj):
    return f"{domain}.wearfleet_{seg(address).lower()}_{obj}"


def now_utc():
    return datetime.now(timezone.utc)


class HarnessError(Exception):
    """The harness could not do its part (a process did not start, an API never answered)."""


class Timeout(HarnessError):
    pass


# --------------------------------------------------------------------------------------------
# Processes: each in a session of its own (killed as a group), dying with this process
# (PR_SET_PDEATHSIG), all stopped on exit in reverse order.

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Processes:
    def __init__(self):
        self.running = []  # (name, Popen)

    def start(self, name, argv, log_path, env=None, append=False):
        log = open(log_path, "ab" if append else "wb")
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        self.running.append((name, process))
        return process

    def stop(self, process, grace=15.0, sig=signal.SIGTERM):
        if process.poll() is None:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(10)
        self.running = [(n, p) for n, p in self.running if p is not process]
        return process.returncode

    def stop_all(self):
        for _, process in reversed(list(self.running)):
            try:
                self.stop(process, grace=10)
            except Exception:  # noqa: BLE001 - cleanup goes on
                pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, predicate, timeout, interval=0.2, process=None):
    """Polls `predicate` until it returns something truthy; that value. Raises Timeout."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except HarnessError:
            raise
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
        if process is not None and process.poll() is not None:
            raise HarnessError(f"{what}: the process exited ({process.returncode})")
        if time.monotonic() >= deadline:
            raise Timeout(f"gave up waiting {timeout:.0f} s for {what}" + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(interval)


# --------------------------------------------------------------------------------------------
# The broker observer: every message, with its receive time, in order.

class Observer:
    """Subscribed to '#' before anything else connects, over MQTT 5 so that each message says how it
    was published: retain-as-published keeps the retain flag of a live message (MQTT 3.1.1 clears it),
    and no retained message is replayed on (re)subscribing, so every message seen is one publication,
    seen once, and `retained` is what its publisher asked."""

    def __init__(self, port, log_path):
        self.lock = threading.Lock()
        self.messages = []  # (monotonic, topic, payload str, retained)
        self.log = open(log_path, "w", encoding="utf-8")
        self.connected = threading.Event()
        self.client = mqtt.Client(client_id=f"ha-test-observer-{os.getpid()}", protocol=mqtt.MQTTv5)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=30, clean_start=True)
        self.client.loop_start()

    def _on_connect(self, client, userdata, flags, reason, properties=None):
        client.subscribe("#", options=mqtt.SubscribeOptions(
            qos=1, retainAsPublished=True, retainHandling=mqtt.SubscribeOptions.RETAIN_DO_NOT_SEND))
        self.connected.set()

    def _on_message(self, client, userdata, message):
        payload = message.payload.decode("utf-8", "replace")
        with self.lock:
            self.messages.append((time.monotonic(), message.topic, payload, bool(message.retain)))
            self.log.write(f"{datetime.now(timezone.utc).isoformat(timespec='milliseconds')} {'R' if message.retain else '-'} "
                           f"{message.topic} {payload}\n")
            self.log.flush()

    def mark(self):
        with self.lock:
            return len(self.messages)

    def since(self, mark, topic=None, match=None):
        with self.lock:
            selected = self.messages[mark:]
        return [m for m in selected if (topic is None or m[1] == topic) and (match is None or match(m))]

    def publish(self, topic, payload, retain=False):
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()
        self.log.close()


class FleetView:
    """Each strap's state as its retained state topic says, and since when it has been ready."""

    def __init__(self, observer):
        self.observer = observer

    def states(self):
        latest, ready_since = {}, {}
        for at, topic, payload, _ in self.observer.since(0):
            match = re.fullmatch(r"wearfleet/device/([0-9A-F]{12})/state", topic)
            if not match:
                continue
            address = match.group(1)
            try:
                state = json.loads(payload).get("state") if payload else None
            except ValueError:
                state = None
            if state == "ready":
                if latest.get(address) != "ready":
                    ready_since[address] = at
            else:
                ready_since.pop(address, None)
            latest[address] = state
        return latest, ready_since


# --------------------------------------------------------------------------------------------
# Home Assistant: configuration, start, onboarding, REST and websocket.

class HomeAssistant:
    def __init__(self, venv_bin, work, mqtt_port, processes):
        self.venv_bin = venv_bin
        self.config = os.path.join(work, "ha-config")
        self.work = work
        self.port = free_port()
        self.mqtt_port = mqtt_port
        self.processes = processes
        self.process = None
        self.runs = 0
        self.token = None
        self.logs = []

    def write_configuration(self):
        shutil.rmtree(self.config, ignore_errors=True)
        os.makedirs(os.path.join(self.config, ".storage"))
        # Only what the test needs: http on loopback, the REST API, the recorder (history), and
        # the MQTT integration (its config entry below). Not default_config: no cloud, analytics,
        # updater, met.no, radio browser, TTS, zeroconf or ssdp, nothing that reaches the internet.
        with open(os.path.join(self.config, "configuration.yaml"), "w") as f:
            f.write(f"""\
homeassistant:
  name: Wearfleet HA test
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: NL
  language: en
  internal_url: "http://127.0.0.1:{self.port}"
http:
  server_host: 127.0.0.1
  server_port: {self.port}
api:
history:
recorder:
  db_url: "sqlite:///{self.config}/home-assistant_v2.db"
  commit_interval: 1
logger:
  default: info
""")
        entries = {
            "version": 1, "minor_version": 1, "key": "core.config_entries",
            "data": {"entries": [{
                "entry_id": uuid.uuid4().hex, "version": 1, "minor_version": 1, "domain": "mqtt",
                "title": f"127.0.0.1:{self.mqtt_port}",
                "data": {"broker": "127.0.0.1", "port": self.mqtt_port, "discovery": True,
                         "discovery_prefix": "homeassistant"},
                "options": {}, "pref_disable_new_entities": False, "pref_disable_polling": False,
                "source": "user", "unique_id": None, "disabled_by": None}]},
        }
        with open(os.path.join(self.config, ".storage", "core.config_entries"), "w") as f:
            json.dump(entries, f, indent=2)

    def start(self, timeout):
        self.runs += 1
        log = os.path.join(self.work, f"home-assistant.run{self.runs}.log")
        self.logs.append(log)
        started = self.started_at = time.monotonic()
        self.process = self.processes.start(
            "home-assistant",
            [os.path.join(self.venv_bin, "hass"), "--config", self.config, "--skip-pip", "--log-no-color",
             "--log-file", log],
            os.path.join(self.work, f"home-assistant.run{self.runs}.stdout"))
        # Up once its HTTP server answers (onboarding's status needs no token: asking /api/ without
        # one would log a failed login).
        wait_for("Home Assistant's HTTP API", lambda: self._answers(), timeout, interval=0.5, process=self.process)
        return time.monotonic() - started

    def _answers(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/onboarding", timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def stop(self):
        code = self.processes.stop(self.process, grace=30)
        self.process = None
        return code

    # REST
    def request(self, method, path, body=None, token=True, form=None, timeout=20):
        headers = {}
        data = None
        if token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read().decode()
            return json.loads(text) if text else None

    def onboard(self):
        """The onboarding user step, a refresh token, then a long-lived token over the websocket."""
        client_id = f"http://127.0.0.1:{self.port}/"
        created = self.request("POST", "/api/onboarding/users", token=False, body={
            "client_id": client_id, "name": "HA tester", "username": "tester",
            "password": "wearfleet-test-password", "language": "en"})
        tokens = self.request("POST", "/auth/token", token=False, form={
            "grant_type": "authorization_code", "code": created["auth_code"], "client_id": client_id})
        self.token = tokens["access_token"]
        self.token = self.ws("auth/long_lived_access_token", client_name="wearfleet-ha-test", lifespan=30)

    def ws(self, command, **fields):
        return asyncio.run(self._ws(command, fields))

    async def _ws(self, command, fields):
        timeout = aiohttp.ClientTimeout(total=30)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.ws_connect(f"http://127.0.0.1:{self.port}/api/websocket") as socket_:
                hello = await socket_.receive_json()
                if hello.get("type") != "auth_required":
                    raise RuntimeError(f"websocket: {hello}")
                await socket_.send_json({"type": "auth", "access_token": self.token})
                answer = await socket_.receive_json()
                if answer.get("type") != "auth_ok":
                    raise RuntimeError(f"websocket auth: {answer}")
                await socket_.send_json({"id": 1, "type": command, **fields})
                while True:
                    message = await socket_.receive_json()
                    if message.get("id") == 1 and message.get("type") == "result":
                        if not message.get("success"):
                            raise RuntimeError(f"websocket {command}: {message.get('error')}")
                        return message.get("result")

    def states(self):
        return {s["entity_id"]: s for s in self.request("GET", "/api/states")}

    def devices(self):
        return self.ws("config/device_registry/list")

    def entities(self):
        return self.ws("config/entity_registry/list")

    def history(self, entity_id, start, end):
        query = urllib.parse.urlencode({
            "filter_entity_id": entity_id, "end_time": end.isoformat(), "significant_changes_only": "0"})
        result = self.request("GET", f"/api/history/period/{urllib.parse.quote(start.isoformat())}?{query}&minimal_response&no_attributes")
        return result[0] if result else []

    def call(self, domain, service, entity_id):
        return self.request("POST", f"/api/services/{domain}/{service}", body={"entity_id": entity_id})

    def log_text(self):
        text = []
        for path in self.logs:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text.append(f.read())
            except OSError:
                pass
        return "".join(text)


def log_records(text):
    """Home Assistant's log as records: (level, first line, whole record with its traceback)."""
    records, current = [], None
    for line in text.splitlines():
        match = LOG_RECORD.match(line)
        if match:
            current = [match.group(1), line, [line]]
            records.append(current)
        elif current is not None:
            current[2].append(line)
    return [(level, first, "\n".join(lines)) for level, first, lines in records]


VALUE_TOPIC = re.compile(r"wearfleet/device/([0-9A-F]{12})/([a-z0-9_]+)")


def value_messages(messages):
    """The value messages among the broker's (monotonic, topic, payload, retained): a JSON object on
    wearfleet/device/ADDR/KIND with its kind, device and time (a notification's receipt, a read's
    own time), keyed by that identity (device, kind, characteristic, time). One value, one key."""
    values = []
    for at, topic, payload, retained in messages:
        match = VALUE_TOPIC.fullmatch(topic)
        if not match or not payload:
            continue
        try:
            value = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(value, dict) or not all(k in value for k in ("kind", "device", "time", "value")):
            continue
        values.append(((value["device"], value["kind"], value.get("characteristic"), value["time"]), at, topic, retained))
    return values


# --------------------------------------------------------------------------------------------
# The run.

class Run:
    def __init__(self, args):
        self.args = args
        self.build_dir = os.path.abspath(args.build_dir)
        self.work = os.path.abspath(args.work)
        self.deadline = time.monotonic() + args.timeout
        self.started = time.monotonic()
        self.processes = Processes()
        self.checks = []
        self.figures = {}
        self.notes = []
        self.observer = None
        self.ha = None
        self.daemon = None
        self.bus = None

    # -- bookkeeping
    def left(self, wanted):
        """A timeout of `wanted` seconds, cut to what the run's bound leaves (at least 1 s)."""
        return max(1.0, min(wanted, self.deadline - time.monotonic()))

    def check(self, key, ok, detail):
        self.checks.append({"check": key, "ok": bool(ok), "detail": detail})
        elapsed = time.monotonic() - self.started
        print(f"{'ok  ' if ok else 'FAIL'} {key}: {detail}  [{elapsed:.0f}s]", flush=True)
        return ok

    def figure(self, key, value):
        self.figures[key] = value

    def step(self, text):
        elapsed = time.monotonic() - self.started
        print(f"---- {text}  [{elapsed:.0f}s]", flush=True)

    def bin(self, name):
        return os.path.join(self.work, "bin", name)

    def snapshot_binaries(self):
        """Copies of the binaries under test: a rebuild during the run does not change them."""
        os.makedirs(os.path.join(self.work, "bin"))
        stamps = {}
        for name in ("wearfleetd", "bluez-sim", "wearfleetctl"):
            source = os.path.join(self.build_dir, name)
            shutil.copy2(source, self.bin(name))
            with open(self.bin(name), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()[:16]
            stamps[name] = {"built": datetime.fromtimestamp(os.stat(source).st_mtime, timezone.utc).isoformat(timespec="seconds"),
                            "sha256": digest}
        self.figure("binaries", stamps)

    # -- the fleet
    def start_broker(self):
        self.mqtt_port = free_port()
        conf = os.path.join(self.work, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"listener {self.mqtt_port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n")
        broker = self.processes.start("mosquitto", ["mosquitto", "-c", conf], os.path.join(self.work, "mosquitto.log"))

        def accepts():
            with socket.create_connection(("127.0.0.1", self.mqtt_port), timeout=2):
                return True
        wait_for("mosquitto to listen", accepts, self.left(20), process=broker)
        self.observer = Observer(self.mqtt_port, os.path.join(self.work, "mqtt.log"))
        if not self.observer.connected.wait(self.left(20)):
            raise HarnessError("the observer could not connect to mosquitto")
        self.fleet = FleetView(self.observer)

    def start_bus_and_simulator(self):
        conf = os.path.join(self.work, "bus.conf")
        with open(conf, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={self.work}/bus.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")
        address_file = os.path.join(self.work, "bus.address")
        if os.path.exists(address_file):
            os.unlink(address_file)
        bus = subprocess.Popen(
            ["dbus-daemon", f"--config-file={conf}", "--nofork", "--print-address=1"],
            stdout=open(address_file, "wb"), stderr=open(os.path.join(self.work, "dbus-daemon.log"), "wb"),
            stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent)
        self.processes.running.append(("dbus-daemon", bus))

        def address():
            with open(address_file) as f:
                line = f.readline().strip()
            return line if line.startswith("unix:") else None
        self.bus = wait_for("dbus-daemon's address", address, self.left(20), process=bus)
        sim_log = os.path.join(self.work, "bluez-sim.log")
        simulator = self.processes.start(
            "bluez-sim", [self.bin("bluez-sim"), "--bus", self.bus, "--scenario", os.path.join(HERE, "scenario.json")], sim_log)

        def ready():
            with open(sim_log, errors="replace") as f:
                return any(line.startswith("ready") for line in f)
        wait_for("bluez-sim to print ready", ready, self.left(60), process=simulator)
        # Every GATT read a client asks of the simulated bluetoothd, one line each (the private
        # bus lets anyone eavesdrop): the simulator's counters have no reads.
        self.reads_log = os.path.join(self.work, "gatt-reads.log")
        self.processes.start(
            "dbus-monitor",
            ["dbus-monitor", "--address", self.bus, "--profile",
             "type='method_call',interface='org.bluez.GattCharacteristic1',member='ReadValue'"],
            self.reads_log)

    def write_daemon_config(self, unpinned=(), pool_prefixes=None, cuff=False):
        pins = "".join(
            f'\n[[pinned]]\naddress = "{a}"\nname = "{NAMES[a]}"\nclass = "heart-rate"\n'
            for a in STRAPS if a not in unpinned)
        if cuff:
            pins += f'\n[[pinned]]\naddress = "{CUFF}"\nname = "HA Cuff"\nclass = "cuff"\n'
        prefixes = f"name_prefixes = {json.dumps(pool_prefixes)}\n" if pool_prefixes is not None else ""
        text = f"""\
# Written by Tests/HomeAssistant/ha_test.py.
[daemon]
state_debounce = "500ms"

[fleet]
adapters = ["hci0"]

[classes.heart-rate]
read = ["2A19", "2A29", "2A24", "2A26"]
subscribe = ["2A37"]
required_services = ["180D"]

[classes.cuff]
subscribe = ["2A35"]
required_services = ["1810"]
bond = true
intermittent = true
set_time = true

[pool]
enabled = true
default_class = "heart-rate"
{prefixes}
[metrics]
enabled = false
{pins}
[mqtt]
enabled = true
url = "mqtt://127.0.0.1:{self.mqtt_port}"
gateway_id = "{GATEWAY}"
allow_commands = ["read", "disconnect", "reconnect", "pin", "unpin"]
"""
        path = os.path.join(self.work, "wearfleetd.toml")
        with open(path + ".new", "w") as f:
            f.write(text)
        os.replace(path + ".new", path)
        return path

    def start_daemon(self):
        self.daemon_started_at = time.monotonic()
        self.daemon = self.processes.start(
            "wearfleetd",
            [self.bin("wearfleetd"), "--config", os.path.join(self.work, "wearfleetd.toml"),
             "--state-dir", os.path.join(self.work, "state"), "--bus", self.bus, "--log-format", "json"],
            os.path.join(self.work, "wearfleetd.log"), append=True)
        return self.daemon

    def daemon_lines(self, message_part):
        count = 0
        try:
            with open(os.path.join(self.work, "wearfleetd.log"), errors="replace") as f:
                for line in f:
                    if message_part in line:
                        count += 1
        except OSError:
            pass
        return count

    def all_ready(self, addresses):
        latest, _ = self.fleet.states()
        return all(latest.get(seg(a)) == "ready" for a in addresses)

    def simulator(self, method, signature=None, *args):
        argv = ["busctl", f"--address={self.bus}", "--json=short", "call", "org.wearfleet.Simulator",
                "/org/wearfleet/simulator", "org.wearfleet.Simulator1", method]
        if signature:
            argv += [signature, *[str(a) for a in args]]
        output = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True).stdout
        # A method that answers nothing (`Wake`) prints nothing.
        return json.loads(output)["data"][0] if output.strip() else None

    def linked_in_simulator(self, address):
        devices = self.simulator("GetDevices")
        entry = devices.get(address) or devices.get(address.upper())
        return bool(entry and entry.get("Connected", {}).get("data"))

    def gatt_reads(self, address, uuid_prefix):
        """ReadValue calls dbus-monitor saw on `address`'s characteristic whose UUID starts so."""
        device = "dev_" + address.replace(":", "_")
        paths = []
        with open(self.reads_log, errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 8 and fields[0] == "mc" and fields[-1] == "ReadValue" and f"/{device}/" in line:
                    paths.append(fields[-3])
        uuids = {}
        for path in set(paths):
            output = subprocess.run(
                ["busctl", f"--address={self.bus}", "--json=short", "get-property", "org.bluez", path,
                 "org.bluez.GattCharacteristic1", "UUID"], capture_output=True, text=True, timeout=20)
            try:
                uuids[path] = json.loads(output.stdout)["data"]
            except (ValueError, KeyError):
                uuids[path] = ""
        return sum(1 for p in paths if uuids.get(p, "").lower().startswith(uuid_prefix))

    def ctl_status(self):
        output = subprocess.run([self.bin("wearfleetctl"), "status", "--json", "--bus", self.bus],
                                capture_output=True, text=True, timeout=20, check=True).stdout
        return {d["address"]: d for d in json.loads(output)["devices"]}

    def wait_for_birth(self, mark, figure):
        """Home Assistant's birth message (sent once it has started and discovery calmed down)."""
        started = time.monotonic()
        wait_for("Home Assistant's birth message (homeassistant/status online)",
                 lambda: self.observer.since(mark, topic="homeassistant/status", match=lambda m: m[2] == "online"),
                 self.left(240), interval=0.5, process=self.ha.process)
        at = self.observer.since(mark, topic="homeassistant/status", match=lambda m: m[2] == "online")[0][0]
        self.figure(figure, round(at - self.ha.started_at, 1))
        return started

    def device_problems(self, addresses=STRAPS):
        by_identifier = {}
        for device in self.ha.devices():
            for domain, identifier in device.get("identifiers", []):
                if domain == "mqtt":
                    by_identifier[identifier] = device
        gateway = by_identifier.get(f"wearfleet_gateway_{GATEWAY}")
        problems = []
        for address in addresses:
            device = by_identifier.get(f"wearfleet_{seg(address)}")
            if device is None:
                problems.append(f"{seg(address)}: no device wearfleet_{seg(address)}")
            elif gateway is None or device.get("via_device_id") != gateway["id"]:
                problems.append(f"{seg(address)}: via_device_id {device.get('via_device_id')} is not the gateway's "
                                f"({gateway['id'] if gateway else 'no gateway device'})")
        return by_identifier, gateway, problems

    def discovery_config(self, component, address, obj):
        topic = f"homeassistant/{component}/wearfleet_{seg(address)}/{obj}/config"
        configs = [m for m in self.observer.since(0, topic=topic) if m[2]]
        return json.loads(configs[-1][2]) if configs else None

    # -- Home Assistant views
    def wearfleet_states(self):
        return {k: v for k, v in self.ha.states().items() if WEARFLEET_ENTITY.match(k)}

    def expected_entities(self, addresses):
        return [entity("sensor", a, o) for a in addresses for o in OBJECTS]

    # -- the whole run
    def run(self):
        os.makedirs(self.work, exist_ok=True)
        for name in os.listdir(self.work):
            path = os.path.join(self.work, name)
            if name in ("result",):
                continue
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
        os.makedirs(os.path.join(self.work, "state"))
        self.snapshot_binaries()
        venv_bin = os.path.dirname(sys.executable)
        from importlib.metadata import version
        self.figure("home_assistant_version", version("homeassistant"))

        self.step("broker, bus, bluez-sim, wearfleetd, Home Assistant")
        self.start_broker()
        self.ha = HomeAssistant(venv_bin, self.work, self.mqtt_port, self.processes)
        self.ha.write_configuration()
        self.start_bus_and_simulator()
        self.write_daemon_config()
        self.start_daemon()
        self.network = NetworkWatch(self)
        self.network.start()
        mark = self.observer.mark()
        self.ha.start(self.left(240))
        wait_for("the onboarding user step", lambda: self.ha.onboard() or True, self.left(60), interval=1)
        self.wait_for_birth(mark, "home_assistant_start_seconds_run1")
        wait_for("every strap ready on the broker", lambda: self.all_ready(STRAPS), self.left(120), process=self.daemon)
        self.ha_started_at = now_utc()

        self.section("1", "devices and entities", self.check_discovery)
        self.section("2", "live values", self.check_live_values)
        self.section("4", "unknown entities once ready for 60 s", self.check_unknown)
        self.section("5", "buttons and the hold switch", self.check_buttons)
        self.section("3", "availability: SIGKILL wearfleetd, then start it again", self.check_availability)
        self.section("8", "Home Assistant restarts", self.check_ha_restart)
        self.section("6", "a reload unpins a strap, the pool on", self.check_unpin)
        self.section("7", "a reload removes the strap from the fleet", self.check_removal)
        self.section("10", "a cuff that wakes to measure", self.check_cuff)
        self.section("11", "Home Assistant restarts while the cuff sleeps", self.check_cuff_restart)
        self.step("2. every value message of the run published once")
        self.check_values_once()
        self.step("9. Home Assistant's log")
        self.ha.stop()
        self.network.stop()
        self.check_log()

    def section(self, number, title, run):
        """One part of the run: a wait that times out fails that part, and the run goes on."""
        self.step(f"{number}. {title}")
        try:
            run()
        except Timeout as error:
            self.check(f"{number} {title}", False, f"the run's own wait timed out: {error}")

    def check_discovery(self):
        expected = self.expected_entities(STRAPS)
        try:
            wait_for("the straps' heart rate, battery and connection sensors in /api/states",
                     lambda: all(e in self.wearfleet_states() for e in expected), self.left(120), interval=1)
        except Timeout:
            pass
        states = self.wearfleet_states()
        missing = [e for e in expected if e not in states]
        self.check("1 entities: heart_rate, battery, connection sensors per strap", not missing,
                   f"missing {missing}" if missing else f"{len(expected)} present")

        try:
            wait_for("every strap's device linked to the gateway device", lambda: not self.device_problems()[2],
                     self.left(30), interval=1)
        except Timeout:
            pass
        by_identifier, gateway, problems = self.device_problems()
        self.check("1 devices: one per strap, identifiers wearfleet_ADDR, via the gateway device", not problems,
                   "; ".join(problems) or "4 devices via wearfleet_gateway_hatest")
        self.check("1 gateway device wearfleet_gateway_hatest has sw_version",
                   gateway is not None and bool(gateway.get("sw_version")),
                   "no gateway device" if gateway is None else f"sw_version {gateway.get('sw_version')!r}")

        # Home Assistant 2024.3's MQTT sensor takes no `options` (its schema drops the key silently;
        # later releases take it): there, the discovery config on the broker must carry them.
        from homeassistant.components.mqtt import sensor as mqtt_sensor
        takes_options = "options" in {str(k) for k in mqtt_sensor._PLATFORM_SCHEMA_BASE.schema}
        problems = []
        for address in STRAPS:
            state = states.get(entity("sensor", address, "connection"))
            if state is None:
                problems.append(f"{address}: no connection sensor")
                continue
            attributes = state["attributes"]
            if attributes.get("device_class") != "enum":
                problems.append(f"{seg(address)}: device_class {attributes.get('device_class')!r}")
            if takes_options:
                options = attributes.get("options")
            else:
                options = (self.discovery_config("sensor", address, "connection") or {}).get("options")
            if sorted(options or []) != sorted(CONNECTION_STATES):
                problems.append(f"{seg(address)}: options {options!r} ({'HA attributes' if takes_options else 'discovery config'})")
        self.check("1 connection sensor is an enum with the ten states", not problems, "; ".join(problems) or (
            "4 enum sensors, options in HA's attributes" if takes_options
            else "4 enum sensors (device_class enum in HA; HA 2024.3's MQTT sensor drops options, the discovery config lists the 10)"))

        registry = {e["entity_id"]: e for e in self.ha.entities()}
        problems = []
        for address in STRAPS:
            rssi = entity("sensor", address, "rssi")
            entry = registry.get(rssi)
            if entry is not None and entry.get("disabled_by") != "integration":
                problems.append(f"{rssi} registered with disabled_by {entry.get('disabled_by')!r}")
        self.check("1 rssi sensor absent or disabled by the integration", not problems, "; ".join(problems) or "ok")
        self.figure("wearfleet_entities_in_states_after_discovery", len(states))
        self.figure("wearfleet_devices_in_registry", sum(1 for k in by_identifier if k.startswith("wearfleet_")))

    def check_live_values(self):
        heart = {a: entity("sensor", a, "heart_rate") for a in STRAPS}

        def numeric(entity_id):
            state = self.wearfleet_states().get(entity_id, {}).get("state")
            try:
                float(state)
                return True
            except (TypeError, ValueError):
                return False
        try:
            wait_for("a number in every heart rate sensor", lambda: all(numeric(e) for e in heart.values()), self.left(90), interval=1)
        except Timeout as error:
            self.check("2 heart rate recorded value for value", False, str(error))
            return
        start = now_utc() - timedelta(seconds=5)
        mark = self.observer.mark()
        wanted = 15

        def published(address):
            values = []
            for _, _, payload, _ in self.observer.since(mark, topic=f"wearfleet/device/{seg(address)}/heart_rate"):
                try:
                    values.append(json.loads(payload)["value"]["heart_rate_bpm"])
                except (ValueError, KeyError, TypeError):
                    pass
            return values
        wait_for(f"{wanted} heart rate values per strap on the broker",
                 lambda: all(len(published(a)) >= wanted for a in STRAPS), self.left(120), interval=0.5)
        sequences = {}
        for address in STRAPS:
            values = published(address)[:wanted]
            sequences[address] = [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]

        def recorded(address):
            history = self.ha.history(heart[address], start, now_utc() + timedelta(seconds=1))
            values = []
            for row in history:
                try:
                    value = float(row["state"])
                except (TypeError, ValueError, KeyError):
                    values.append(row.get("state"))
                    continue
                values.append(int(value) if value.is_integer() else value)
            return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]

        def contains(outer, inner):
            return any(outer[i:i + len(inner)] == inner for i in range(len(outer) - len(inner) + 1))
        results = {}
        try:
            wait_for("Home Assistant's history to hold every published value",
                     lambda: all(contains(recorded(a), sequences[a]) for a in STRAPS), self.left(60), interval=1)
        except Timeout:
            pass
        for address in STRAPS:
            results[address] = contains(recorded(address), sequences[address])
        published_changes = sum(len(s) for s in sequences.values())
        self.figure("heart_rate_distinct_consecutive_values_compared", published_changes)
        bad = [a for a, ok in results.items() if not ok]
        detail = (f"{published_changes} distinct consecutive values over 4 straps, each in history/period in order"
                  if not bad else "; ".join(f"{seg(a)}: published {sequences[a]}, history {recorded(a)}" for a in bad))
        self.check("2 heart rate recorded value for value (MQTT vs history/period)", not bad, detail)

    def check_values_once(self):
        """Over the whole run, no value published twice: one device's value of one kind from one
        characteristic at one time is one message (the recorded-value check above collapses repeats
        and cannot see it). The observer sees each publication once (no replay on subscribing)."""
        values = value_messages(self.observer.since(0))
        by_identity = {}
        for identity, at, topic, retained in values:
            by_identity.setdefault(identity, []).append((at, retained))
        twice = {k: v for k, v in by_identity.items() if len(v) > 1}
        kinds = {}
        for (device, kind, _, _), _, _, _ in values:
            kinds[kind] = kinds.get(kind, 0) + 1
        self.figure("value_messages_by_kind", kinds)
        self.figure("value_messages_published_more_than_once", [
            {"device": k[0], "kind": k[1], "time": k[3], "copies": len(v), "seconds_apart": round(v[-1][0] - v[0][0], 3)}
            for k, v in list(twice.items())[:20]])
        self.check("2 every value message published once (device, kind, characteristic, time)", values and not twice,
                   "no value message seen" if not values else
                   f"{len(values)} value messages ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), each once" if not twice
                   else f"{len(twice)} published more than once: " + "; ".join(
                       f"{k[0]} {k[1]} time {k[3]} x{len(v)} ({v[-1][0] - v[0][0]:.1f} s apart)" for k, v in list(twice.items())[:5]))

    def check_unknown(self):
        def ready_long_enough():
            latest, since = self.fleet.states()
            return all(seg(a) in since and time.monotonic() - since[seg(a)] >= 60 for a in STRAPS)
        try:
            wait_for("every strap ready for 60 s", ready_long_enough, self.left(150), interval=1)
        except Timeout as error:
            self.check("4 no entity unknown once its device has been ready 60 s", False, str(error))
            return

        def unknown():
            # Buttons have no state until first pressed (their state is the last press): not counted.
            return sorted(k for k, v in self.wearfleet_states().items()
                          if v["state"] == "unknown" and not k.startswith("button."))
        found = unknown()
        if found:
            # One more look a little later, in case a value was on its way at the very moment.
            try:
                wait_for("no unknown entity", lambda: not unknown(), self.left(15), interval=1)
            except Timeout:
                pass
            found = unknown()
        self.figure("unknown_entities_after_ready_60s", len(found))
        self.figure("unknown_entities_after_ready_60s_list", found)
        self.check("4 no entity unknown once its device has been ready 60 s", not found,
                   f"{len(found)} unknown: {found}" if found else "0 unknown (buttons not counted: no state until pressed)")

    def check_buttons(self):
        # Every battery read of the pressed strap in this section (its reconnect after the hold, the
        # read_battery button, any other), counted as the simulated bluetoothd serves them, against the
        # battery values published meanwhile: one read, one message.
        battery_reads_before = self.gatt_reads(PRESSED, "00002a19")
        battery_mark = self.observer.mark()
        reconnect = entity("button", PRESSED, "reconnect")
        hold = entity("switch", PRESSED, "hold")
        read_battery = entity("button", PRESSED, "read_battery")
        wanted = [entity(d, a, o) for a in STRAPS for d, o in (("button", "reconnect"), ("switch", "hold"), ("button", "read_battery"))]
        try:
            # Announced with the sensors, so a short wait once those are there.
            wait_for("the buttons and hold switches", lambda: all(e in self.wearfleet_states() for e in wanted), self.left(20), interval=1)
        except Timeout:
            pass
        states = self.wearfleet_states()
        missing = [e for e in wanted if e not in states]
        self.check("5 reconnect and read_battery buttons and hold switch per strap", not missing,
                   f"missing {missing}" if missing else f"{len(wanted)} present")
        topic = f"wearfleet/device/{seg(PRESSED)}"
        connection = entity("sensor", PRESSED, "connection")

        def ok_result(mark):
            return [m for m in self.observer.since(mark, topic=f"{topic}/command/result")
                    if '"ok":true' in m[2].replace(" ", "") and "ha-test-restore" not in m[2]]

        # Hold ON: disconnect and hold.
        if hold not in states:
            self.check("5 hold switch ON disconnects the strap and holds it", False, f"{hold} does not exist")
            self.check("5 hold switch OFF brings the strap back to ready", False, f"{hold} does not exist")
        else:
            try:
                self.ha.call("switch", "turn_on", hold)
                wait_for("the strap unlinked in the simulator, not ready in wearfleetctl and HA",
                         lambda: not self.linked_in_simulator(PRESSED)
                         and self.ctl_status()[PRESSED]["state"] != "ready"
                         and self.wearfleet_states().get(connection, {}).get("state") not in ("ready", None),
                         self.left(45), interval=0.5)
                wait_for("the hold switch on", lambda: self.wearfleet_states()[hold]["state"] == "on", self.left(20), interval=0.5)
                self.check("5 hold switch ON disconnects the strap and holds it", True,
                           f"simulator not linked, wearfleetctl {self.ctl_status()[PRESSED]['state']}, "
                           f"{connection} {self.wearfleet_states()[connection]['state']}, switch on")
            except Exception as error:  # noqa: BLE001
                self.check("5 hold switch ON disconnects the strap and holds it", False, f"{error}")
            try:
                self.ha.call("switch", "turn_off", hold)
                wait_for("the strap ready again",
                         lambda: self.linked_in_simulator(PRESSED) and self.ctl_status()[PRESSED]["state"] == "ready"
                         and self.wearfleet_states().get(connection, {}).get("state") == "ready"
                         and self.wearfleet_states()[hold]["state"] == "off",
                         self.left(60), interval=0.5)
                self.check("5 hold switch OFF brings the strap back to ready", True, "linked, ready in wearfleetctl and HA, switch off")
            except Exception as error:  # noqa: BLE001
                self.check("5 hold switch OFF brings the strap back to ready", False, f"{error}")
            # (Whatever happened, the strap is wanted again for what follows.)
            mark = self.observer.mark()
            self.observer.publish(f"{topic}/command", json.dumps({"id": "ha-test-restore", "op": "reconnect"}))
            try:
                wait_for("the test's own reconnect answered",
                         lambda: self.observer.since(mark, topic=f"{topic}/command/result", match=lambda m: "ha-test-restore" in m[2]),
                         self.left(30), interval=0.5)
            except Timeout:
                pass

        # read_battery: a read the device serves, its value published, a result ok.
        if read_battery not in states:
            self.check("5 read_battery reads the battery (result ok, value published)", False, f"{read_battery} does not exist")
        else:
            try:
                counters_before = self.simulator("GetCounters")
                reads_before = self.gatt_reads(PRESSED, "00002a19")
                mark = self.observer.mark()
                self.ha.call("button", "press", read_battery)
                wait_for("a command, its ok result, a battery value and the simulator serving a battery read",
                         lambda: self.observer.since(mark, topic=f"{topic}/command") and ok_result(mark)
                         and self.observer.since(mark, topic=f"{topic}/battery")
                         and self.gatt_reads(PRESSED, "00002a19") > reads_before,
                         self.left(30), interval=0.5)
                counters_after = self.simulator("GetCounters")
                # (Should the simulator count reads one day, its counter must agree.)
                reads = {k: (counters_before.get(k), counters_after.get(k)) for k in counters_after if "read" in k.lower()}
                counted_ok = all(_total(after) > _total(before) for before, after in reads.values()) if reads else True
                served = f"simulator counters {reads}" if reads else "(the simulator's counters have no reads)"
                self.check("5 read_battery reads the battery (result ok, value published)", counted_ok,
                           f"result {ok_result(mark)[0][2]}; battery value published; ReadValue on the strap's 2A19 "
                           f"{reads_before} -> {self.gatt_reads(PRESSED, '00002a19')} (dbus-monitor) {served}")
            except Exception as error:  # noqa: BLE001
                self.check("5 read_battery reads the battery (result ok, value published)", False, f"{error}")

        if reconnect not in states:
            self.check("5 reconnect button sends a command the daemon accepts", False, f"{reconnect} does not exist")
        else:
            try:
                mark = self.observer.mark()
                self.ha.call("button", "press", reconnect)
                wait_for("a command and its ok result", lambda: self.observer.since(mark, topic=f"{topic}/command") and ok_result(mark),
                         self.left(30), interval=0.5)
                wait_for("the strap ready", lambda: self.ctl_status()[PRESSED]["state"] == "ready", self.left(45), interval=0.5)
                self.check("5 reconnect button sends a command the daemon accepts", True, f"result {ok_result(mark)[0][2]}; strap ready")
            except Exception as error:  # noqa: BLE001
                self.check("5 reconnect button sends a command the daemon accepts", False, f"{error}")
        wait_for("every strap ready", lambda: self.all_ready(STRAPS), self.left(90), process=self.daemon)

        def battery_values():
            return value_messages(self.observer.since(battery_mark, topic=f"{topic}/battery"))

        def battery_reads():
            return self.gatt_reads(PRESSED, "00002a19") - battery_reads_before
        try:
            wait_for("a battery value for every battery read of the section",
                     lambda: len(battery_values()) >= battery_reads(), self.left(30), interval=0.5)
        except Timeout:
            pass
        reads, values = battery_reads(), battery_values()
        times = ", ".join(identity[3][11:23] for identity, _, _, _ in values)
        self.figure("section5_battery_reads_and_values", [reads, len(values)])
        self.check("5 each battery read of the strap gives exactly one battery value message", reads >= 1 and len(values) == reads,
                   f"{reads} ReadValue on its 2A19 (dbus-monitor), {len(values)} battery values (times {times or 'none'})")

    def check_availability(self):
        def is_gateway(entity_id):
            return entity_id.startswith("binary_sensor.") and GATEWAY in entity_id

        def strap_entities(states):
            # The gateway's connectivity sensor says off (its payload_off), rather than unavailable.
            return {k: v for k, v in states.items() if not is_gateway(k)}
        before = strap_entities(self.wearfleet_states())
        self.daemon.send_signal(signal.SIGKILL)
        self.daemon.wait(30)
        self.processes.running = [(n, p) for n, p in self.processes.running if p is not self.daemon]
        try:
            wait_for("every wearfleet entity unavailable (the Will)",
                     lambda: all(v["state"] == "unavailable" for v in strap_entities(self.wearfleet_states()).values())
                     and [v["state"] for k, v in self.wearfleet_states().items() if is_gateway(k)] == ["off"],
                     self.left(60), interval=0.5)
            ok = True
        except Timeout:
            ok = False
        states = self.wearfleet_states()
        still = sorted(k for k, v in strap_entities(states).items() if v["state"] != "unavailable")
        gateway = [v["state"] for k, v in self.wearfleet_states().items() if is_gateway(k)]
        if gateway != ["off"]:
            ok = False
            still.append(f"gateway connectivity {gateway} (wanted off)")
        self.check("3 SIGKILL: every wearfleet entity unavailable, the gateway's connectivity off", ok,
                   f"{len(strap_entities(states))} entities unavailable, gateway status {gateway}" if ok else f"still available: {still}")
        self.figure("entities_checked_for_unavailability", len(strap_entities(states)))

        restart_mark = self.observer.mark()
        self.start_daemon()
        try:
            wait_for("every strap ready again", lambda: self.all_ready(STRAPS) and self.daemon_lines("mqtt: connected") >= 2,
                     self.left(120), interval=0.5, process=self.daemon)
            wait_for("every entity available again",
                     lambda: not [k for k, v in strap_entities(self.wearfleet_states()).items() if v["state"] == "unavailable"],
                     self.left(90), interval=1)
            ok = True
        except Timeout:
            ok = False
        states = strap_entities(self.wearfleet_states())
        down = sorted(k for k, v in states.items() if v["state"] == "unavailable")
        back = [k for k in before if k not in states]
        self.check("3 restart: every wearfleet entity available again", ok and not back,
                   f"{len(states)} available" if ok and not back else f"unavailable {down}, gone {back}")

        # The restart must not take a strap's buttons away, even for a moment: an empty message on a
        # discovery topic removes the entity in Home Assistant (and, retained, the broker's config).
        problems = []
        for address in STRAPS:
            config_topic = f"homeassistant/button/wearfleet_{seg(address)}/read_battery/config"
            emptied = [m for m in self.observer.since(restart_mark, topic=config_topic) if not m[2]]
            if emptied:
                announced = [m for m in self.observer.since(restart_mark, topic=config_topic) if m[2] and m[0] > emptied[0][0]]
                problems.append(
                    f"{seg(address)} {len(emptied)} empty{' retained' if emptied[0][3] else ''} at +{emptied[0][0] - self.daemon_started_at:.1f} s"
                    + (f", again {announced[0][0] - emptied[0][0]:.2f} s later" if announced else ", never again"))
            latest = self.observer.since(0, topic=config_topic)
            if not latest or not latest[-1][2]:
                problems.append(f"{seg(address)}: no config on {config_topic} now")
        self.figure("read_battery_configs_emptied_by_restart", problems)
        self.check("3 restart: no strap's read_battery button config emptied (an empty config after the start)", not problems,
                   "; ".join(problems) or f"{len(STRAPS)} configs, none emptied (homeassistant/button/…/read_battery/config)")

    def restart_home_assistant(self):
        """Stops Home Assistant and starts it again; waits for its birth message, wearfleetd's
        discovery sent again and every wearfleet entity it showed before back (available, not a
        restored placeholder). (birth seen, discovery resent count, all back, entities not back,
        entities expected, the observer's mark at the start)."""
        resent_before = self.daemon_lines("Home Assistant is online; sending discovery again")
        expected = sorted(k for k in self.wearfleet_states())
        code = self.ha.stop()
        self.figure(f"home_assistant_exit_code_run{self.ha.runs}", code)
        mark = self.observer.mark()
        self.ha.start(self.left(240))
        try:
            self.wait_for_birth(mark, f"home_assistant_start_seconds_run{self.ha.runs}")
            birth = True
        except Timeout:
            birth = False
        try:
            wait_for("wearfleetd to send discovery again",
                     lambda: self.daemon_lines("Home Assistant is online; sending discovery again") > resent_before,
                     self.left(30), interval=0.5, process=self.daemon)
        except Timeout:
            pass

        def back():
            states = self.wearfleet_states()
            return all(k in states and states[k]["state"] != "unavailable" and not states[k]["attributes"].get("restored")
                       for k in expected)
        try:
            wait_for("every entity back after Home Assistant's restart", back, self.left(120), interval=1)
            ok = True
        except Timeout:
            ok = False
        states = self.wearfleet_states()
        missing = [k for k in expected if k not in states or states[k]["state"] == "unavailable"
                   or states[k]["attributes"].get("restored")]
        resent = self.daemon_lines("Home Assistant is online; sending discovery again") - resent_before
        return birth, resent, ok, missing, expected, mark

    def check_ha_restart(self):
        birth, resent, ok, missing, expected, _ = self.restart_home_assistant()
        self.figure("device_via_gateway_problems_after_ha_restart", self.device_problems()[2])
        self.figure("discovery_resent_after_ha_restart", resent)
        self.check("8 HA restart: birth message, discovery sent again, every entity back", ok and resent >= 1 and birth,
                   f"birth seen, discovery resent {resent}x, {len(expected)} entities back" if ok and resent >= 1 and birth
                   else f"birth message seen: {birth}; discovery resent {resent}x; not back: {missing}")

    def check_cuff_restart(self):
        """Home Assistant restarts while the cuff sleeps: its measurements are not sent again until it
        next wakes, so its systolic, diastolic, pulse and last-measurement sensors can only come back
        from the broker (its retained wearfleet/device/ADDR/blood_pressure/latest), the very values
        shown before."""
        wanted = [entity("sensor", CUFF, o) for o in CUFF_OBJECTS]
        connection = entity("sensor", CUFF, "connection")
        shown_before = dict(getattr(self, "cuff_shown", {}))
        measurements = f"wearfleet/device/{seg(CUFF)}/blood_pressure"
        latest = f"{measurements}/latest"
        last_published = [m for m in self.observer.since(0, topic=latest) if m[2]]
        birth, resent, ok, missing, expected, mark = self.restart_home_assistant()
        self.check("11 HA restart with the cuff asleep: birth message, discovery sent again, every entity back",
                   ok and resent >= 1 and birth,
                   f"birth seen, discovery resent {resent}x, {len(expected)} entities back" if ok and resent >= 1 and birth
                   else f"birth message seen: {birth}; discovery resent {resent}x; not back: {missing}")

        def state_of(entity_id):
            return (self.wearfleet_states().get(entity_id) or {}).get("state")

        def shown():
            return all(state_of(e) not in (None, "unknown", "unavailable") for e in wanted)
        # Back means discovered and available; a retained value arrives with the subscriptions, a
        # moment later at most.
        try:
            wait_for("the cuff's measurements shown again", shown, self.left(45), interval=1)
        except Timeout:
            pass
        states = {e: state_of(e) for e in wanted}
        problems = []
        for name in CUFF_OBJECTS:
            e = entity("sensor", CUFF, name)
            if states[e] in (None, "unknown", "unavailable"):
                problems.append(f"{name} {states[e]!r}")
            elif e in shown_before and states[e] != shown_before[e]:
                problems.append(f"{name} {states[e]!r}, was {shown_before[e]!r}")
        if not shown_before:
            problems.append("section 10 showed no measurement to compare with")
        fresh = [m for m in self.observer.since(mark, topic=measurements) if m[2]]
        if fresh:
            problems.append(f"the cuff published {len(fresh)} measurements since the restart (not restored: sent again)")
        if state_of(connection) != "asleep":
            problems.append(f"{connection} {state_of(connection)!r}, not asleep")
        retained = (f"its latest blood_pressure {'retained' if last_published[-1][3] else 'published, not retained'} on …/latest"
                    if last_published else "nothing published on …/blood_pressure/latest before")
        self.figure("cuff_entities_after_ha_restart", states)
        self.check("11 the sleeping cuff's measurements restored from the broker after HA's restart", not problems,
                   ("; ".join(problems) + f" ({retained})") if problems else
                   ", ".join(f"{o}={states[entity('sensor', CUFF, o)]}" for o in CUFF_OBJECTS) + f", as before ({retained})")

    def check_unpin(self):
        reloads = self.daemon_lines("configuration reloaded")
        mark = self.observer.mark()
        self.write_daemon_config(unpinned=[LEAVING])
        self.daemon.send_signal(signal.SIGHUP)
        topic = f"wearfleet/device/{seg(LEAVING)}/state"

        def unpinned():
            for _, _, payload, _ in self.observer.since(mark, topic=topic):
                try:
                    if json.loads(payload).get("pinned") is False:
                        return payload
                except ValueError:
                    pass
            return None
        try:
            wait_for("the reload", lambda: self.daemon_lines("configuration reloaded") > reloads, self.left(30), process=self.daemon)
            state = wait_for(f"{topic} to say pinned false", unpinned, self.left(30), interval=0.5)
            self.check("6 reload unpins a strap (pool on): its state says pinned false", True, state)
        except Timeout as error:
            self.check("6 reload unpins a strap (pool on): its state says pinned false", False, str(error))

    def check_removal(self):
        reloads = self.daemon_lines("configuration reloaded")
        identifier = f"wearfleet_{seg(LEAVING)}"
        log_mark = len(self.ha.log_text())
        # The pool admits only names no strap has: the unpinned strap leaves the fleet.
        self.write_daemon_config(unpinned=[LEAVING], pool_prefixes=["NoSuchWearable"])
        self.daemon.send_signal(signal.SIGHUP)

        def gone():
            return not any(i == ["mqtt", identifier] for d in self.ha.devices() for i in d.get("identifiers", []))
        try:
            wait_for("the reload", lambda: self.daemon_lines("configuration reloaded") > reloads, self.left(30), process=self.daemon)
            wait_for(f"{identifier} gone from the device registry", gone, self.left(60), interval=1)
            ok = True
        except Timeout:
            ok = False
        leftover = [k for k in self.wearfleet_states() if seg(LEAVING).lower() in k]
        # What Home Assistant logged since: errors or warnings about it (value_json undefined, …).
        # (Read once more after Home Assistant stops: check_log counts everything.)
        self.removal_log_mark = (len(self.ha.logs), log_mark)
        new = self.ha.log_text()[log_mark:]
        about = [first for level, first, whole in log_records(new)
                 if level in ("WARNING", "ERROR", "CRITICAL") and re.search(f"{seg(LEAVING)}|value_json", whole, re.IGNORECASE)]
        self.check("7 removed strap leaves HA's device registry, no error about it", ok and not about and not leftover,
                   f"{identifier} gone, no entity left, no warning" if ok and not about and not leftover
                   else f"device gone: {ok}; entities left {leftover}; log: {about[:5]}")
        self.figure("log_lines_about_removed_strap", len(about))

    def check_cuff(self):
        """A reload pins the sleeping cuff: Home Assistant shows it `asleep`; woken, it sends three
        measurements, which become its systolic, diastolic and pulse sensors and the time of its
        last measurement, and it sleeps again with all of them still shown."""
        reloads = self.daemon_lines("configuration reloaded")
        self.write_daemon_config(unpinned=[LEAVING], pool_prefixes=["NoSuchWearable"], cuff=True)
        self.daemon.send_signal(signal.SIGHUP)
        wait_for("the reload", lambda: self.daemon_lines("configuration reloaded") > reloads, self.left(30), process=self.daemon)
        connection = entity("sensor", CUFF, "connection")

        def state_of(entity_id):
            return (self.wearfleet_states().get(entity_id) or {}).get("state")
        wait_for("the cuff asleep in Home Assistant", lambda: state_of(connection) == "asleep", self.left(90), interval=1)
        self.check("10 a sleeping cuff is asleep in Home Assistant, not failing", True, f"{connection}: asleep")
        sessions = self.daemon_lines("→ asleep")
        self.simulator("Wake", "s", CUFF)
        wanted = [entity("sensor", CUFF, o) for o in CUFF_OBJECTS]

        def measured():
            return all(state_of(e) not in (None, "unknown", "unavailable") for e in wanted)
        wait_for("the cuff's measurements in Home Assistant", measured, self.left(120), interval=1)
        wait_for("the cuff asleep again", lambda: self.daemon_lines("→ asleep") > sessions and state_of(connection) == "asleep",
                 self.left(90), interval=1)
        states = {e: state_of(e) for e in wanted}
        problems = []
        for name in ("systolic", "diastolic", "pulse"):
            value = states[entity("sensor", CUFF, name)]
            try:
                float(value)
            except (TypeError, ValueError):
                problems.append(f"{name}: {value!r}")
        try:
            last = datetime.fromisoformat(states[entity("sensor", CUFF, "last_measurement")].replace("Z", "+00:00"))
            if abs((now_utc() - last).total_seconds()) > 600:
                problems.append(f"last_measurement {last} is not recent")
        except (TypeError, ValueError, AttributeError):
            problems.append(f"last_measurement: {states[entity('sensor', CUFF, 'last_measurement')]!r}")
        # Asleep, its measurements stay: they need no link.
        for e in wanted:
            if state_of(e) in (None, "unknown", "unavailable"):
                problems.append(f"{e} {state_of(e)!r} while asleep")
        self.check("10 its measurements and the time of the last one, shown while it sleeps", not problems,
                   "; ".join(problems) or ", ".join(f"{o}={states[entity('sensor', CUFF, o)]}" for o in CUFF_OBJECTS))
        self.figure("cuff_entities", states)
        self.cuff_shown = states

    def check_log(self):
        # The log must be there to be read: every Home Assistant run's --log-file holds records, and
        # among them the MQTT integration's connection to this run's broker (homeassistant.components.
        # mqtt.client logs it at INFO once its config entry is set up). Without that, "no warning"
        # below would count nothing.
        connected = re.compile(
            rf" INFO \(.*\) \[homeassistant\.components\.mqtt\.client\] Connected to MQTT server "
            rf"127\.0\.0\.1:{self.mqtt_port} \(0\)$")
        runs, unproven = [], []
        for index, path in enumerate(self.ha.logs, 1):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    run_records = log_records(f.read())
            except OSError as error:
                unproven.append(f"run {index}: {os.path.basename(path)} unreadable ({error.strerror})")
                continue
            if not run_records:
                unproven.append(f"run {index}: {os.path.basename(path)} has no log record")
            elif not any(connected.search(first) for _, first, _ in run_records):
                unproven.append(f"run {index}: {len(run_records)} records, none 'Connected to MQTT server "
                                f"127.0.0.1:{self.mqtt_port} (0)'")
            runs.append(len(run_records))
        if len(self.ha.logs) != self.ha.runs or not self.ha.logs:
            unproven.append(f"{len(self.ha.logs)} log files for {self.ha.runs} Home Assistant runs")
        log_read = not unproven
        self.figure("ha_log_records_per_run", runs)
        self.check("9 HA log read: records from every run, each with the MQTT integration connected to the broker", log_read,
                   f"{len(runs)} runs, {'+'.join(map(str, runs))} records, each 'Connected to MQTT server "
                   f"127.0.0.1:{self.mqtt_port} (0)'" if log_read else "; ".join(unproven))
        records = log_records(self.ha.log_text())
        warnings = [(level, first, whole) for level, first, whole in records if level in ("WARNING", "ERROR", "CRITICAL")]
        caused = [(level, first) for level, first, whole in warnings if WEARFLEET_CAUSED.search(whole)]
        other = [first for level, first, whole in warnings if not WEARFLEET_CAUSED.search(whole)]
        counts = {"WARNING": 0, "ERROR": 0, "CRITICAL": 0}
        for level, _ in caused:
            counts[level] += 1
        self.figure("ha_log_warnings_caused_by_wearfleetd", counts["WARNING"])
        self.figure("ha_log_errors_caused_by_wearfleetd", counts["ERROR"] + counts["CRITICAL"])
        self.figure("ha_log_lines_caused_by_wearfleetd", [first for _, first in caused])
        self.figure("ha_log_other_warnings_and_errors", other)
        kinds = {}
        for _, first in caused:
            message = re.sub(r"^\S+ \S+ \S+ \(\S+\) ", "", first)
            message = re.sub(r"C0FFEE4A000\d|c0ffee4a000\d", "ADDR", message)
            message = re.sub(r"\d+", "N", message)[:160]
            kinds[message] = kinds.get(message, 0) + 1
        self.figure("ha_log_caused_kinds", kinds)
        detail = (f"{counts['WARNING']} warnings, {counts['ERROR'] + counts['CRITICAL']} errors"
                  + (": " + " | ".join(f"{n}x {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:6]) if caused else ""))
        if not log_read:
            detail += " (counted in a log not shown to be read)"
        self.check("9 HA log: no WARNING or ERROR caused by wearfleetd's messages", log_read and not caused, detail)
        for level, first in caused[:40]:
            print(f"     {first[:300]}")
        network = [first for level, first, whole in records if NETWORK_ATTEMPT.search(whole)]
        attempts = self.network.foreign
        self.figure("ha_network_attempts", {"log_lines": network, "sockets": sorted(attempts)})
        self.check("HA tried no network beyond loopback (log and its sockets)", log_read and not network and not attempts,
                   ("none" if not network and not attempts else f"log {network[:5]}; sockets {sorted(attempts)[:10]}")
                   + ("" if log_read else " (log not shown to be read)"))


def _total(value):
    if isinstance(value, dict):
        value = value.get("data", value)
    if isinstance(value, dict):
        return sum(v for v in value.values() if isinstance(v, (int, float)))
    return value if isinstance(value, (int, float)) else 0


class NetworkWatch:
    """Samples Home Assistant's sockets (ss) and keeps every peer that is not loopback."""

    def __init__(self, run):
        self.run = run
        self.foreign = set()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def start(self):
        if not self.thread.is_alive():
            self.thread.start()

    def stop(self):
        self.stopping.set()

    def _loop(self):
        while not self.stopping.wait(0.5):
            process = self.run.ha.process if self.run.ha else None
            if process is None or process.poll() is not None:
                continue
            try:
                output = subprocess.run(["ss", "-tunapH"], capture_output=True, text=True, timeout=10).stdout
            except Exception:  # noqa: BLE001
                continue
            for line in output.splitlines():
                if f"pid={process.pid}," not in line:
                    continue
                fields = line.split()
                if len(fields) < 6:
                    continue
                peer = fields[5]
                host = peer.rsplit(":", 1)[0].strip("[]")
                if host in ("*", "0.0.0.0", "::", "127.0.0.1", "::1", "::ffff:127.0.0.1") or host.startswith("127."):
                    continue
                self.foreign.add(f"{fields[0]} {fields[4]} -> {peer}")


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as error:
        return f"({error})\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--timeout", type=float, default=360)
    args = parser.parse_args()

    def terminate(signum, frame):
        raise SystemExit(f"ha-test: signal {signum}")
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, terminate)

    run = Run(args)
    error = None
    try:
        run.run()
    except BaseException as caught:  # noqa: BLE001 - reported, then everything is stopped
        error = caught
        detail = f"{type(caught).__name__}: {caught}"
        run.check("harness: the run went to its end", False, detail)
        if not isinstance(caught, (HarnessError, SystemExit, KeyboardInterrupt)):
            traceback.print_exc()
    finally:
        if run.ha is not None and run.ha.process is not None:
            try:
                run.ha.stop()
            except Exception:  # noqa: BLE001
                pass
        if getattr(run, "network", None):
            run.network.stop()
        run.processes.stop_all()
        if run.observer is not None:
            run.observer.close()
        # Every Home Assistant run's log, in order, as one file.
        if run.ha is not None:
            with open(os.path.join(run.work, "home-assistant.log"), "w", encoding="utf-8") as combined:
                for index, path in enumerate(run.ha.logs, 1):
                    combined.write(f"######## Home Assistant run {index} ({os.path.basename(path)})\n")
                    combined.write(tail(path, 10 ** 9))
    failed = [c for c in run.checks if not c["ok"]]
    duration = time.monotonic() - run.started
    run.figure("run_seconds", round(duration, 1))
    result = {
        "passed": not failed,
        "build_dir": run.build_dir,
        "time": now_utc().isoformat(timespec="seconds"),
        "figures": run.figures,
        "checks": run.checks,
    }
    with open(os.path.join(run.work, "results.json"), "w") as f:
        json.dump(result, f, indent=2)
    if failed:
        rel = os.path.relpath(run.work)
        print(f"\n---- Home Assistant log, last lines ({rel}/home-assistant.log)")
        print(tail(os.path.join(run.work, "home-assistant.log"), 25), end="")
        print(f"---- wearfleetd log, last lines ({rel}/wearfleetd.log)")
        print(tail(os.path.join(run.work, "wearfleetd.log"), 15), end="")
    print(f"home-assistant tier: {len(run.checks) - len(failed)} checks passed, {len(failed)} failed "
          f"({duration:.0f} s); results in {os.path.relpath(os.path.join(run.work, 'results.json'))}")
    if error is not None and isinstance(error, KeyboardInterrupt):
        return 1
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
