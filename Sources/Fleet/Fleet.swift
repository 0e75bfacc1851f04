// Fleet: the runtime that executes FleetCore decisions against BlueZ.
