#ifndef WEARFLEET_CMOSQUITTO_SHIM_H
#define WEARFLEET_CMOSQUITTO_SHIM_H
// libmosquitto (MQTT 3.1.1 and 5, TLS), plus eventfd for waking the client's loop thread, which
// Glibc's Swift module does not export. _GNU_SOURCE must NOT be defined here (see CDBus's shim).
#include <mosquitto.h>
#include <sys/eventfd.h>

// MQTT_PROTOCOL_V311 and MQTT_PROTOCOL_V5 are plain integer macros and import; re-stated as
// constants so the Swift side does not depend on how a later header spells them.
static const int wearfleet_mqtt_protocol_v311 = MQTT_PROTOCOL_V311;
static const int wearfleet_mqtt_protocol_v5 = MQTT_PROTOCOL_V5;
#endif
