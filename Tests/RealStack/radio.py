"""Virtual radios for the real-stack tier, built on bumble (pinned in requirements.txt).

Adapters: each `/dev/vhci` opened here is one adapter of the guest's kernel (hciN), backed by a
bumble software controller. Peripherals: bumble devices, each on a controller of its own, on the
same link, so every adapter hears every peripheral and a peripheral links with one central at a
time, as radios do.

bumble 0.0.236 does not yet behave as Linux 6.1 expects a controller to in four places, and
one more makes two adapters on one link act like radios; the corrections live here, in
subclasses, and nowhere else:

1. `LocalLink.send_acl_data` gives a central's ACL data the sender's *random* address as source.
   The kernel connects with the adapter's public address, so the peripheral, which keys its
   links by the address it saw in the connect request, drops every ATT packet.
   `CorrectedLink` sends with the address the link was made with.
2. The kernel enables, and then waits for, LE Enhanced Connection Complete when a controller
   claims LE Extended Advertising or LL Privacy (`use_enhanced_conn_complete` in Linux 6.1);
   bumble only ever sends LE Connection Complete, so each connect waits out the kernel's
   timeout and ends with a Create Connection Cancel the controller refuses (kernel log:
   `Opcode 0x200e failed: -16`). `CorrectedController` claims neither (nor periodic
   advertising), so the kernel uses the legacy commands and events, which bumble implements.
3. LE Create Connection Cancel must end the pending attempt and report it with LE Connection
   Complete, status 0x02 (Unknown Connection Identifier); bumble answers success and keeps the
   attempt pending, so the kernel's next Create Connection is refused as already pending.
4. The side that disconnects gets Disconnection Complete with reason 0x16 (Connection
   Terminated by Local Host); bumble reports the reason it sent to the peer.
5. A central connects only to a peripheral that is advertising at that moment (see
   `CorrectedController.create_le_connection`).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from dataclasses import dataclass, field

from bumble import hci, ll
from bumble.att import ATT_Error, ErrorCode
from bumble.controller import Controller
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

logger = logging.getLogger("realstack.radio")

HEART_RATE_SERVICE = "180D"
HEART_RATE_MEASUREMENT = "2A37"
BODY_SENSOR_LOCATION = "2A38"
BATTERY_SERVICE = "180F"
BATTERY_LEVEL = "2A19"
# The test's own service: a control point that takes writes with and without response, and one
# that refuses every write with an ATT error (0xFC, Write Request Rejected).
CONTROL_SERVICE = "5e1f0001-7d2a-4c1b-9a3e-0b6f2d8c4a10"
CONTROL_POINT = "5e1f0002-7d2a-4c1b-9a3e-0b6f2d8c4a10"
LOCKED_POINT = "5e1f0003-7d2a-4c1b-9a3e-0b6f2d8c4a10"
REJECTED_WRITE_ERROR = ErrorCode.WRITE_REQUEST_REJECTED  # 0xFC

SUPERVISION_TIMEOUT = hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR  # 0x08: the peer went out of range
UNKNOWN_CONNECTION_IDENTIFIER = 0x02
TERMINATED_BY_LOCAL_HOST = hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR  # 0x16


class CorrectedLink(LocalLink):
    """LocalLink, sending LE ACL data from the address the sender's link was made with (1)."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().send_acl_data(sender_controller, destination_address, transport, data)
        connection = sender_controller.le_connections.get(destination_address)
        destination_controller = self.find_le_controller(destination_address)
        if connection is None or destination_controller is None:
            return
        source_address = connection.self_address
        asyncio.get_running_loop().call_soon(
            lambda: destination_controller.on_link_acl_data(source_address, transport, data)
        )


class CorrectedController(Controller):
    """bumble's controller with the corrections Linux 6.1 needs (2, 3, 4, 5)."""

    def describe(self) -> str:
        """One line for a failure report: this adapter's links, attempt and scanning."""
        pending = self.pending_le_connection
        links = ", ".join(str(address) for address in self.le_connections) or "no link"
        return (f"{self.name}: {links}; attempt pending: {pending.peer_address if pending else 'none'}; "
                f"scanning: {'on' if self.le_scan_enable else 'off'}")

    # (2) Legacy advertising only: no extended, no periodic advertising.
    le_features = Controller.le_features & ~(
        hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
        | hci.LeFeatureMask.LL_PRIVACY
    )

    # Link events are logged (logger "realstack.radio"): with the daemon's and bluetoothd's
    # logs they show what happened on the air, where an HCI trace is not at hand.
    def create_le_connection(self, peer_address):
        # (5) A central answers an advertisement within 150 µs, so on the air the advertiser is
        # still there to take the connect request. bumble delivers link packets a loop turn
        # later and reports the connection as made without asking the advertiser: a second
        # adapter acting on an advertisement that was already answered would believe it holds
        # a link the peripheral never took (and its host would keep a phantom link up). Such an
        # attempt stays pending, as a real initiator keeps scanning, until the peer advertises.
        if not self._advertising_connectably(peer_address):
            logger.info("%s: %s no longer advertises; the attempt stays pending", self.name, peer_address)
            return None
        logger.info("%s: connecting to %s", self.name, peer_address)
        return super().create_le_connection(peer_address)

    def _advertising_connectably(self, address) -> bool:
        for controller in self.link.controllers:
            advertiser = controller.le_legacy_advertiser
            if advertiser.enabled and advertiser.address == address:
                return True
        return False

    def on_le_connect_ind(self, packet):
        # The link delivers every connect request to every controller; log only the ones taken.
        links_before = len(self.le_connections)
        result = super().on_le_connect_ind(packet)
        if len(self.le_connections) > links_before:
            logger.info("%s: took the connect request of %s", self.name, packet.initiator_address)
        return result

    def on_le_disconnected(self, connection, reason):
        logger.info("%s: link with %s ended, reason 0x%02x", self.name, connection.peer_address, reason)
        return super().on_le_disconnected(connection, reason)

    def on_hci_le_create_connection_cancel_command(self, command):
        # (3) Spec Vol 4, Part E, 7.8.13: Command Disallowed when nothing is pending; otherwise
        # the attempt ends and LE Connection Complete (0x02) follows the Command Complete.
        pending = self.pending_le_connection
        logger.info("%s: create connection cancel (%s pending)", self.name, pending.peer_address if pending else "nothing")
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None

        def report_cancelled():
            self.send_hci_packet(
                hci.HCI_LE_Connection_Complete_Event(
                    status=UNKNOWN_CONNECTION_IDENTIFIER,
                    connection_handle=0,
                    role=hci.Role.CENTRAL,
                    peer_address_type=pending.peer_address.address_type,
                    peer_address=pending.peer_address,
                    connection_interval=0,
                    peripheral_latency=0,
                    supervision_timeout=0,
                    central_clock_accuracy=0,
                )
            )

        asyncio.get_running_loop().call_soon(report_cancelled)
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_disconnect_command(self, command):
        # (4) The peer hears the reason given; this side's host hears "terminated by local host".
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None or not self.link:
            return super().on_hci_disconnect_command(command)
        logger.info("%s: host disconnects %s, reason 0x%02x", self.name, connection.peer_address, command.reason)
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        connection.send_ll_control_pdu(ll.TerminateInd(command.reason))
        self.on_le_disconnected(connection, TERMINATED_BY_LOCAL_HOST)
        return None

    def lose_link(self, peer_address: hci.Address, reason: int) -> bool:
        """Ends the LE link with `peer_address` on this side only, as a radio that stops
        hearing its peer does after the supervision timeout."""
        connection = self.le_connections.get(peer_address)
        if connection is None:
            return False
        self.on_le_disconnected(connection, reason)
        return True


async def open_adapter(link: CorrectedLink, index: int, address: str) -> tuple[CorrectedController, object]:
    """One kernel adapter: a corrected controller behind a new `/dev/vhci`."""
    transport = await open_transport("vhci")
    controller = CorrectedController(
        f"adapter{index}",
        host_source=transport.source,
        host_sink=transport.sink,
        link=link,
        public_address=hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS),
    )
    return controller, transport


@dataclass
class PeripheralCounters:
    """What a peripheral did, for the scenarios to compare with what the daemon reports."""

    # Sequence numbers of the Heart Rate Measurements sent (carried in Energy Expended), in order.
    sent: list[int] = field(default_factory=list)
    links: int = 0
    link_losses: int = 0
    subscriptions: int = 0
    writes_with_response: list[bytes] = field(default_factory=list)
    writes_without_response: list[bytes] = field(default_factory=list)
    writes_rejected: int = 0
    battery_reads: int = 0


class HeartRateStrap:
    """A heart-rate strap: Heart Rate (measurement notifications, body sensor location),
    Battery, and the test's control service. While a central has subscribed it sends one
    measurement per `interval`; each carries a 16-bit sequence number in its Energy Expended
    field, so the receiver's records can be matched one to one with what was sent."""

    def __init__(self, link: CorrectedLink, name: str, address: str, services: list[str], interval: float):
        self.name = name
        self.address = hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS)
        self.advertised_services = services
        self.interval = interval
        self.counters = PeripheralCounters()
        self.controller = CorrectedController(name, link=link, public_address=self.address)
        self.device = Device(name=name, address=self.address, host=Host(self.controller, AsyncPipeSink(self.controller)))
        self.in_range = True
        self.sending = True
        self.connection = None
        self.subscribed = False
        self.sequence = 0
        self._pump: asyncio.Task | None = None
        self._pending_commands: list[bytes] = []
        self._advertising_lock = asyncio.Lock()

        self.measurement = Characteristic(
            HEART_RATE_MEASUREMENT, Characteristic.Properties.NOTIFY, Characteristic.READABLE, b"\x00\x00"
        )
        self.measurement.on(self.measurement.EVENT_SUBSCRIPTION, self._on_subscription)
        control = Characteristic(
            CONTROL_POINT,
            Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
            Characteristic.WRITEABLE,
            CharacteristicValue(write=self._on_control_write),
        )
        locked = Characteristic(
            LOCKED_POINT, Characteristic.Properties.WRITE, Characteristic.WRITEABLE,
            CharacteristicValue(write=self._on_locked_write),
        )
        self.device.add_services([
            Service(HEART_RATE_SERVICE, [
                self.measurement,
                Characteristic(BODY_SENSOR_LOCATION, Characteristic.Properties.READ, Characteristic.READABLE, b"\x01"),
            ]),
            Service(BATTERY_SERVICE, [
                Characteristic(BATTERY_LEVEL, Characteristic.Properties.READ, Characteristic.READABLE,
                               CharacteristicValue(read=self._on_battery_read)),
            ]),
            Service(CONTROL_SERVICE, [control, locked]),
        ])
        self.device.on(self.device.EVENT_CONNECTION, self._on_connection)

    # A write with response arrives as an ATT Write Request, one without as a Write Command, and
    # bumble calls the same write function for both (from a task of its own, later): the value of
    # each Write Command is noted when the PDU arrives, and a write carrying a noted value is
    # counted as one without response.
    def _on_control_write(self, connection, value: bytes):
        value = bytes(value)
        if value in self._pending_commands:
            self._pending_commands.remove(value)
            self.counters.writes_without_response.append(value)
        else:
            self.counters.writes_with_response.append(value)

    def _on_locked_write(self, connection, value: bytes):
        self.counters.writes_rejected += 1
        raise ATT_Error(REJECTED_WRITE_ERROR)

    def _on_battery_read(self, connection) -> bytes:
        self.counters.battery_reads += 1
        return bytes([87])

    async def start(self):
        await self.device.power_on()
        # Tell writes from commands apart (see _on_control_write).
        server = self.device.gatt_server
        original_on_write_command = server.on_att_write_command

        def on_write_command(bearer, request):
            self._pending_commands.append(bytes(request.attribute_value))
            return original_on_write_command(bearer, request)

        server.on_att_write_command = on_write_command
        await self.advertise()
        self._pump = asyncio.create_task(self._send_measurements())

    def advertising_data(self) -> bytes:
        uuids = b"".join(struct.pack("<H", int(uuid, 16)) for uuid in self.advertised_services)
        return bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, uuids),
            (AdvertisingData.COMPLETE_LOCAL_NAME, self.name.encode()),
        ]))

    def describe(self) -> str:
        """One line for a failure report: what this peripheral is doing on the air."""
        advertiser = self.controller.le_legacy_advertiser
        links = ", ".join(str(address) for address in self.controller.le_connections) or "no link"
        return (f"{self.name}: {'in range' if self.in_range else 'out of range'}, "
                f"{'advertising' if advertiser.enabled else 'not advertising'}, {links}, "
                f"{'subscribed' if self.subscribed else 'not subscribed'}, {len(self.counters.sent)} sent")

    async def advertise(self):
        # One HCI command at a time per host: a disconnection and a return to range can both
        # ask for advertising at once.
        async with self._advertising_lock:
            if self.in_range and self.connection is None and not self.device.is_advertising:
                logger.info("%s: advertising", self.name)
                await self._start_advertising()

    async def _start_advertising(self):
        await self.device.start_advertising(
            own_address_type=hci.OwnAddressType.PUBLIC,
            advertising_data=self.advertising_data(),
            advertising_interval_min=200,
            advertising_interval_max=200,
        )

    def _on_connection(self, connection):
        self.connection = connection
        self.subscribed = False
        self.counters.links += 1
        connection.on(connection.EVENT_DISCONNECTION, lambda reason: self._on_disconnection(connection, reason))

    def _on_disconnection(self, connection, reason):
        if self.connection is connection:
            self.connection = None
            self.subscribed = False
            self.counters.link_losses += 1
        if self.in_range:
            asyncio.get_running_loop().create_task(self.advertise())

    def _on_subscription(self, bearer, notify_enabled: bool, indicate_enabled: bool):
        self.subscribed = notify_enabled
        if notify_enabled:
            self.counters.subscriptions += 1

    async def _send_measurements(self):
        while True:
            await asyncio.sleep(self.interval)
            connection = self.connection
            if connection is None or not self.subscribed or not self.sending:
                continue
            self.sequence = (self.sequence + 1) & 0xFFFF
            # Flags 0x08: 8-bit heart rate, Energy Expended present; then bpm, energy (LE).
            value = struct.pack("<BBH", 0x08, 60 + self.sequence % 40, self.sequence)
            try:
                await self.device.notify_subscriber(connection, self.measurement, value)
            except Exception as error:  # the link went as it was sent: not sent, and the pump goes on
                logger.info("%s: measurement %d not sent: %s", self.name, self.sequence, error)
                continue
            self.counters.sent.append(self.sequence)

    async def go_out_of_range(self, adapters: list[CorrectedController]):
        """Stops advertising and loses its link on both sides with reason 0x08, as a strap
        carried away does: neither side says goodbye, the supervision timeout ends the link."""
        self.in_range = False
        async with self._advertising_lock:
            if self.device.is_advertising:
                await self.device.stop_advertising()
        connection = self.connection
        if connection is not None:
            central = connection.peer_address
            for adapter in adapters:
                if adapter.lose_link(self.address, SUPERVISION_TIMEOUT):
                    break
            self.controller.lose_link(central, SUPERVISION_TIMEOUT)

    async def come_back(self):
        self.in_range = True
        await self.advertise()
