// FleetCore's API speaks of devices (`DeviceID`, `AdapterID`), BlueZ failures
// (`BlueZErrorKind`) and seeded jitter (`SeededRandom`), all defined in leaf modules below it so
// that the BlueZ client and the simulator share them without depending on FleetCore. They are
// re-exported so that everything which imports FleetCore keeps seeing them as part of its
// vocabulary, instead of every file adding two more imports.
@_exported import BluetoothVocabulary
@_exported import DeterministicRandom
