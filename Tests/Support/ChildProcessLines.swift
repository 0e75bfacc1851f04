import Foundation

extension ChildProcess {
    /// The child's output as a stream of lines, finished at the end of its output. Call it once:
    /// each line is read only once.
    ///
    /// The lines are read on a thread of their own: blocking reads on the Swift concurrency pool
    /// would starve an in-process peer the child talks to (the simulator, a control endpoint).
    public func outputLines() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream<String>.makeStream()
        Thread.detachNewThread {
            while let line = self.readLine() { sink.yield(line) }
            sink.finish()
        }
        return stream
    }
}
