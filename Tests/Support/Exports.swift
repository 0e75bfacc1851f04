// Test support builds on the process helpers the benchmarks and the demo use too.
@_exported import ProcessSupport
