// The daemon's library is three modules along its seams: the configuration (over the TOML
// reader), the state file, and this runtime. Whoever imports `Fleet` gets all three, as before
// they were split.
@_exported import FleetConfiguration
@_exported import FleetState
