"""Measurement devices for the real-stack tier: a blood-pressure cuff and a weight scale, bumble
peripherals on the same link as radio.py's straps (its corrected controllers).

They behave as such devices do (issue: bonding and devices that wake only to measure): asleep
most of the time; every `asleep` seconds they wake, take a few measurements stamped with their own
clock (which starts wrong, at 2020-01-01, until a central writes Current Time), and advertise for
at most `awake` seconds (a sleep can be made longer: `longer_sleeps`). Once a central has connected, encrypted the link and enabled the
measurement's indications, the device indicates every stored record in order, each waiting for
its confirmation; a record leaves the queue only when confirmed, so what a link loses is sent on
the next one. Two seconds after the last confirmation the device ends the link itself and sleeps;
any end of the link, or the end of the awake window, ends the wake.

Security, as bumble 0.0.236 allows it (../shared/FACTS.md, "Measurement devices on the real
stack"): bumble marks every encrypted LE link "authenticated" and adds a CCC descriptor with no
security of its own, so each device brings its own CCC for the measurement and checks the link
itself: the cuff wants an encrypted link whose stored key came from an authenticated (MITM,
passkey) pairing, the scale an encrypted link. Both answer Insufficient Authentication (0x05)
otherwise, which makes bluetoothd raise the link's security. Bonds live in bumble's memory
keystore, for the life of the process.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import struct
import time
from dataclasses import dataclass, field

from bumble import hci
from bumble.att import ATT_Error, Attribute, AttributeValueV2, ErrorCode, is_enhanced_bearer
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import (
    GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR,
    Characteristic,
    CharacteristicValue,
    Descriptor,
    Service,
)
from bumble.host import Host
from bumble.pairing import PairingConfig, PairingDelegate
from bumble.transport.common import AsyncPipeSink

from radio import CorrectedController, CorrectedLink

logger = logging.getLogger("realstack.measurement")

BLOOD_PRESSURE_SERVICE = "1810"
BLOOD_PRESSURE_MEASUREMENT = "2A35"
BLOOD_PRESSURE_FEATURE = "2A49"
WEIGHT_SCALE_SERVICE = "181D"
WEIGHT_MEASUREMENT = "2A9D"
WEIGHT_SCALE_FEATURE = "2A9E"
CURRENT_TIME_SERVICE = "1805"
CURRENT_TIME = "2A2B"

# Where every device clock starts: wrong on purpose, until a central sets it.
CLOCK_START = datetime.datetime(2020, 1, 1, 0, 0, 0)
# The device ends the link this long after its last record was confirmed.
DISCONNECT_AFTER_LAST = 2.0
# The Current Time Service's "Data field ignored" (a value the device cannot apply).
DATA_FIELD_IGNORED = 0x80


def stamp_text(moment: datetime.datetime) -> str:
    """A Date Time as the daemon's value JSON writes it (`YYYY-MM-DDTHH:MM:SS`)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def date_time_bytes(moment: datetime.datetime) -> bytes:
    return struct.pack("<HBBBBB", moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def sfloat(value: int) -> bytes:
    """An IEEE 11073 SFLOAT with exponent 0 (a whole number, |value| ≤ 2045)."""
    return struct.pack("<H", value & 0x0FFF)


class FixedPasskeyDelegate(PairingDelegate):
    """Display-only, showing the same passkey every time (as a device with a printed code)."""

    def __init__(self, passkey: int):
        super().__init__(io_capability=PairingDelegate.IoCapability.DISPLAY_OUTPUT_ONLY)
        self.passkey = passkey

    async def generate_passkey(self) -> int:
        return self.passkey


@dataclass
class MeasurementRecord:
    """One measurement, as taken and as the daemon should report it."""

    number: int
    wake: int
    taken_at: float  # time.time()
    stamp: str  # the device clock when taken, as the value JSON writes it
    clock_set: bool  # taken after a central had set the clock
    key: tuple  # what identifies it among the daemon's watch records
    payload: bytes
    confirmed_at: float | None = None
    link: int | None = None


@dataclass
class LinkRecord:
    """What happened on one link (one session), at the device."""

    number: int
    wake: int
    central: str
    connected_at: float
    encrypted_at: float | None = None
    pairing_started_at: float | None = None
    paired_at: float | None = None
    pairing_failed_at: float | None = None
    pairing_failure: str | None = None
    subscribed_at: float | None = None
    refused_before_security: int = 0
    clock_writes: list[float] = field(default_factory=list)
    confirmed: int = 0
    ended_at: float | None = None
    reason: int | None = None
    ended_by_device: bool = False


@dataclass
class MeasurementCounters:
    """What a measurement device did, for the scenario to compare with the daemon's outputs."""

    advertising_started: list[float] = field(default_factory=list)  # one per wake, time.time()
    slept_at: list[float] = field(default_factory=list)  # when each wake ended
    taken: list[MeasurementRecord] = field(default_factory=list)
    confirmed: list[MeasurementRecord] = field(default_factory=list)
    clock_writes: list[tuple[float, str]] = field(default_factory=list)  # (time, value written)
    pairing_starts: int = 0
    pairings: int = 0
    pairing_failures: list[str] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    indications_unconfirmed: int = 0

    @property
    def wakes(self) -> int:
        return len(self.advertising_started)

    @property
    def last_clock_written(self) -> str | None:
        return self.clock_writes[-1][1] if self.clock_writes else None


class MeasurementDevice:
    """The wake/record/indicate/sleep behaviour shared by the cuff and the scale; subclasses
    give the services, the pairing configuration, the security a link needs and the records."""

    service_uuid: str
    measurement_uuid: str
    kind: str

    def __init__(self, link: CorrectedLink, name: str, address: str, *, records_per_wake: int,
                 awake: float, asleep: float, first_wake_after: float, longer_sleeps: dict[int, float] | None = None):
        self.name = name
        self.address = hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS)
        self.records_per_wake = records_per_wake
        self.awake_window = awake
        self.asleep = asleep
        self.first_wake_after = first_wake_after
        # After wake N, sleep this long instead (a sleep longer than bluetoothd's pending Connect).
        self.longer_sleeps = dict(longer_sleeps or {})
        self.counters = MeasurementCounters()
        self.controller = CorrectedController(name, link=link, public_address=self.address)
        self.device = Device(name=name, address=self.address, host=Host(self.controller, AsyncPipeSink(self.controller)))
        self.device.pairing_config_factory = self.pairing_config
        self.queue: list[MeasurementRecord] = []
        self.connection = None
        self.link_record: LinkRecord | None = None
        self.awake = False
        self.scheduled = False
        self.wake_number = 0
        self._clock_base = CLOCK_START
        self._clock_mark = time.monotonic()
        self.clock_set = False
        self._wake_over: asyncio.Event | None = None
        self._schedule: asyncio.Task | None = None
        self._pump: asyncio.Task | None = None

        # The device's own CCC: it checks the link before it takes the subscription (see above).
        self.measurement = Characteristic(
            self.measurement_uuid, Characteristic.Properties.INDICATE,
            Attribute.READABLE | Attribute.READ_REQUIRES_ENCRYPTION | Attribute.READ_REQUIRES_AUTHENTICATION, b"",
            descriptors=[Descriptor(
                GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR, Attribute.READABLE | Attribute.WRITEABLE,
                AttributeValueV2(read=self._read_ccc, write=self._write_ccc),
            )],
        )
        current_time = Characteristic(
            CURRENT_TIME,
            Characteristic.Properties.READ | Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY,
            Attribute.READABLE | Attribute.WRITEABLE | Attribute.WRITE_REQUIRES_ENCRYPTION,
            CharacteristicValue(read=self._read_clock, write=self._write_clock),
        )
        self.device.add_services([
            Service(self.service_uuid, [self.measurement, self.feature_characteristic()]),
            Service(CURRENT_TIME_SERVICE, [current_time]),
        ])
        self.device.on(self.device.EVENT_CONNECTION, self._on_connection)

    # MARK: - Subclasses

    def pairing_config(self, connection) -> PairingConfig:
        raise NotImplementedError

    def feature_characteristic(self) -> Characteristic:
        raise NotImplementedError

    async def link_is_secure(self, connection) -> bool:
        raise NotImplementedError

    def make_record(self, number: int, stamp: datetime.datetime) -> tuple[tuple, bytes]:
        """The record's matching key and its bytes."""
        raise NotImplementedError

    # MARK: - Clock

    def clock(self) -> datetime.datetime:
        return self._clock_base + datetime.timedelta(seconds=time.monotonic() - self._clock_mark)

    def _read_clock(self, connection) -> bytes:
        now = self.clock()
        # Date Time, Day of Week (1 = Monday), Fractions256, Adjust Reason.
        return date_time_bytes(now) + bytes([now.isoweekday(), int(now.microsecond * 256 / 1_000_000), 0])

    def _write_clock(self, connection, value: bytes):
        value = bytes(value)
        if len(value) != 10:
            raise ATT_Error(ErrorCode.INVALID_ATTRIBUTE_LENGTH)
        year, month, day, hour, minute, second, _weekday, fractions, reason = struct.unpack("<HBBBBBBBB", value)
        try:
            moment = datetime.datetime(year, month, day, hour, minute, second, int(fractions * 1_000_000 / 256))
        except ValueError:
            raise ATT_Error(DATA_FIELD_IGNORED) from None
        self._clock_base = moment
        self._clock_mark = time.monotonic()
        self.clock_set = True
        written = f"{stamp_text(moment)} (adjust reason 0x{reason:02x})"
        self.counters.clock_writes.append((time.time(), written))
        if self.link_record is not None and connection is self.connection:
            self.link_record.clock_writes.append(time.time())
        logger.info("%s: clock set to %s", self.name, written)

    # MARK: - Subscription and indications

    def _read_ccc(self, bearer) -> bytes:
        return self.device.gatt_server.read_cccd(bearer, self.measurement)

    async def _write_ccc(self, bearer, value: bytes):
        connection = bearer.connection if is_enhanced_bearer(bearer) else bearer
        if not await self.link_is_secure(connection):
            if self.link_record is not None:
                self.link_record.refused_before_security += 1
            raise ATT_Error(ErrorCode.INSUFFICIENT_AUTHENTICATION)
        self.device.gatt_server.write_cccd(bearer, self.measurement, bytes(value))
        indicating = len(value) == 2 and value[0] & 0x02 != 0
        logger.info("%s: indications %s", self.name, "enabled" if indicating else "disabled")
        if indicating and connection is self.connection:
            if self.link_record is not None and self.link_record.subscribed_at is None:
                self.link_record.subscribed_at = time.time()
            if self._pump is None or self._pump.done():
                self._pump = asyncio.get_running_loop().create_task(self._indicate_queue(connection))

    def _indications_enabled(self, connection) -> bool:
        ccc = self.device.gatt_server.subscribers.get(connection, {}).get(self.measurement.handle)
        return bool(ccc) and len(ccc) == 2 and ccc[0] & 0x02 != 0

    async def _indicate_queue(self, connection):
        """Indicates every stored record, each confirmed before the next; then hangs up."""
        while self.queue and self.connection is connection and self._indications_enabled(connection):
            record = self.queue[0]
            try:
                await self.device.indicate_subscriber(connection, self.measurement, record.payload)
            except Exception as error:  # no confirmation (the link went): the record stays queued
                self.counters.indications_unconfirmed += 1
                logger.info("%s: record %d not confirmed: %s", self.name, record.number, error)
                return
            if self.connection is not connection:
                return
            record.confirmed_at = time.time()
            record.link = self.link_record.number if self.link_record else None
            self.queue.pop(0)
            self.counters.confirmed.append(record)
            if self.link_record is not None:
                self.link_record.confirmed += 1
        if self.queue or self.connection is not connection:
            return  # indications were turned off: wait for them again
        await asyncio.sleep(DISCONNECT_AFTER_LAST)
        if self.connection is connection:
            logger.info("%s: all records confirmed; hanging up", self.name)
            if self.link_record is not None:
                self.link_record.ended_by_device = True
            try:
                await connection.disconnect()
            except Exception as error:
                logger.info("%s: disconnect failed: %s", self.name, error)

    # MARK: - Links

    def _on_connection(self, connection):
        self.connection = connection
        self.link_record = LinkRecord(
            number=len(self.counters.links) + 1, wake=self.wake_number, central=str(connection.peer_address),
            connected_at=time.time())
        self.counters.links.append(self.link_record)
        record = self.link_record
        logger.info("%s: linked with %s (link %d, wake %d)", self.name, connection.peer_address, record.number, record.wake)
        connection.on(connection.EVENT_DISCONNECTION, lambda reason: self._on_disconnection(connection, record, reason))
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE, lambda: self._on_encryption(connection, record))
        connection.on(connection.EVENT_PAIRING_START, lambda: self._on_pairing_start(record))
        connection.on(connection.EVENT_PAIRING, lambda keys: self._on_pairing(record))
        connection.on(connection.EVENT_PAIRING_FAILURE, lambda reason: self._on_pairing_failure(record, reason))

    def _on_encryption(self, connection, record: LinkRecord):
        if connection.encryption and record.encrypted_at is None:
            record.encrypted_at = time.time()
            logger.info("%s: link %d encrypted", self.name, record.number)

    def _on_pairing_start(self, record: LinkRecord):
        self.counters.pairing_starts += 1
        record.pairing_started_at = time.time()
        logger.info("%s: pairing started (link %d)", self.name, record.number)

    def _on_pairing(self, record: LinkRecord):
        self.counters.pairings += 1
        record.paired_at = time.time()
        logger.info("%s: paired (link %d)", self.name, record.number)

    def _on_pairing_failure(self, record: LinkRecord, reason):
        name = getattr(reason, "name", str(reason))
        self.counters.pairing_failures.append(name)
        record.pairing_failed_at = time.time()
        record.pairing_failure = name
        logger.info("%s: pairing failed: %s (link %d)", self.name, name, record.number)

    def _on_disconnection(self, connection, record: LinkRecord, reason):
        record.ended_at = time.time()
        record.reason = reason
        logger.info("%s: link %d ended, reason 0x%02x, %d records left", self.name, record.number, reason, len(self.queue))
        if self.connection is connection:
            self.connection = None
            if self._pump is not None and not self._pump.done():
                self._pump.cancel()
        if self._wake_over is not None:
            self._wake_over.set()  # any end of the link ends the wake

    # MARK: - Wake schedule

    async def start(self):
        await self.device.power_on()

    def start_schedule(self):
        self.scheduled = True
        self._schedule = asyncio.get_running_loop().create_task(self._run_schedule())

    def stop_schedule(self):
        """No further wake; a wake under way runs to its end."""
        self.scheduled = False

    async def _run_schedule(self):
        await asyncio.sleep(self.first_wake_after)
        while self.scheduled:
            await self._wake()
            await asyncio.sleep(self.sleep_after(self.wake_number))

    def sleep_after(self, wake: int) -> float:
        return self.longer_sleeps.get(wake, self.asleep)

    def advertising_data(self) -> bytes:
        return bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", int(self.service_uuid, 16))),
            (AdvertisingData.COMPLETE_LOCAL_NAME, self.name.encode()),
        ]))

    async def _wake(self):
        self.wake_number += 1
        for _ in range(self.records_per_wake):
            number = len(self.counters.taken) + 1
            stamp = self.clock()
            key, payload = self.make_record(number, stamp)
            record = MeasurementRecord(number=number, wake=self.wake_number, taken_at=time.time(),
                                       stamp=stamp_text(stamp), clock_set=self.clock_set, key=key, payload=payload)
            self.counters.taken.append(record)
            self.queue.append(record)
        self.awake = True
        self._wake_over = asyncio.Event()
        await self.device.start_advertising(
            own_address_type=hci.OwnAddressType.PUBLIC,
            advertising_data=self.advertising_data(),
            advertising_interval_min=100,
            advertising_interval_max=100,
        )
        self.counters.advertising_started.append(time.time())
        logger.info("%s: wake %d, advertising with %d records", self.name, self.wake_number, len(self.queue))
        try:
            await asyncio.wait_for(self._wake_over.wait(), self.awake_window)
        except (TimeoutError, asyncio.TimeoutError):
            logger.info("%s: awake window over", self.name)
        # Asleep: the radio goes quiet, whatever the central thought.
        if self.device.is_advertising:
            await self.device.stop_advertising()
        connection = self.connection
        if connection is not None:
            try:
                await connection.disconnect()
            except Exception as error:
                logger.info("%s: disconnect at sleep failed: %s", self.name, error)
        self.awake = False
        self._wake_over = None
        self.counters.slept_at.append(time.time())
        logger.info("%s: asleep (%d records kept)", self.name, len(self.queue))

    def describe(self) -> str:
        """One line for a failure report."""
        links = ", ".join(str(address) for address in self.controller.le_connections) or "no link"
        return (f"{self.name}: {'awake' if self.awake else 'asleep'} (wake {self.wake_number}), "
                f"{'advertising' if self.device.is_advertising else 'not advertising'}, {links}, "
                f"{len(self.counters.taken)} taken, {len(self.counters.confirmed)} confirmed, {len(self.queue)} queued, "
                f"{self.counters.pairing_starts} pairings started, {self.counters.pairings} paired, "
                f"failures {self.counters.pairing_failures}, {len(self.counters.clock_writes)} clock writes")


class BloodPressureCuff(MeasurementDevice):
    """Secure Connections, bonding, MITM, display-only with a fixed passkey; Blood Pressure
    (measurement indications, feature) and Current Time."""

    service_uuid = BLOOD_PRESSURE_SERVICE
    measurement_uuid = BLOOD_PRESSURE_MEASUREMENT
    kind = "blood_pressure"

    def __init__(self, link: CorrectedLink, name: str, address: str, passkey: int, **schedule):
        self.passkey = passkey
        super().__init__(link, name, address, **schedule)

    def pairing_config(self, connection) -> PairingConfig:
        return PairingConfig(sc=True, mitm=True, bonding=True, delegate=FixedPasskeyDelegate(self.passkey))

    def feature_characteristic(self) -> Characteristic:
        return Characteristic(BLOOD_PRESSURE_FEATURE, Characteristic.Properties.READ, Attribute.READABLE, b"\x00\x00")

    async def link_is_secure(self, connection) -> bool:
        # Encrypted, with a key from an authenticated pairing: bumble would call any encrypted
        # link authenticated, so the stored key decides.
        if not connection.encryption or self.device.keystore is None:
            return False
        keys = await self.device.keystore.get(str(connection.peer_address))
        return keys is not None and keys.ltk is not None and keys.ltk.authenticated

    def make_record(self, number: int, stamp: datetime.datetime) -> tuple[tuple, bytes]:
        systolic, diastolic, pulse = 110 + number, 70 + number % 20, 60 + number % 30
        mean = (systolic + 2 * diastolic) // 3
        # Flags: mmHg, time stamp, pulse rate.
        payload = (bytes([0x06]) + sfloat(systolic) + sfloat(diastolic) + sfloat(mean)
                   + date_time_bytes(stamp) + sfloat(pulse))
        return (stamp_text(stamp), systolic, diastolic, pulse), payload

    @staticmethod
    def watch_key(record: dict) -> tuple | None:
        value = record.get("value", {})
        try:
            return (value["timestamp"], int(value["systolic"]), int(value["diastolic"]), int(value["pulse_rate_bpm"]))
        except (KeyError, TypeError, ValueError):
            return None


class WeightScale(MeasurementDevice):
    """Just Works bonding; Weight Scale (measurement indications with a time stamp, feature) and
    Current Time."""

    service_uuid = WEIGHT_SCALE_SERVICE
    measurement_uuid = WEIGHT_MEASUREMENT
    kind = "weight"

    def pairing_config(self, connection) -> PairingConfig:
        return PairingConfig(sc=True, mitm=False, bonding=True,
                             delegate=PairingDelegate(io_capability=PairingDelegate.IoCapability.NO_OUTPUT_NO_INPUT))

    def feature_characteristic(self) -> Characteristic:
        # Time Stamp supported; no user, BMI or resolution claims.
        return Characteristic(WEIGHT_SCALE_FEATURE, Characteristic.Properties.READ, Attribute.READABLE,
                              struct.pack("<I", 0x00000001))

    async def link_is_secure(self, connection) -> bool:
        return bool(connection.encryption)

    def make_record(self, number: int, stamp: datetime.datetime) -> tuple[tuple, bytes]:
        raw = 14000 + 20 * number  # 0.005 kg units: 70.000 kg + 0.1 kg a record
        payload = bytes([0x02]) + struct.pack("<H", raw) + date_time_bytes(stamp)  # SI, time stamp
        return (stamp_text(stamp), raw), payload

    @staticmethod
    def watch_key(record: dict) -> tuple | None:
        value = record.get("value", {})
        try:
            return (value["timestamp"], round(float(value["weight"]) * 200))
        except (KeyError, TypeError, ValueError):
            return None
