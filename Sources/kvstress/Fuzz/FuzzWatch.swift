import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds of a monotonic clock.
enum FuzzClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// The input running now, watched by a background thread that ends the process when one
/// input runs longer than `limit` seconds.
final class FuzzWatch: @unchecked Sendable {
    let mode: FuzzMode
    let seed: UInt64
    let limit: Double
    private let lock = NSLock()
    private var target = ""
    private var index = 0
    private var input: [UInt8] = []
    private var started: UInt64 = 0  // 0: no input running

    init(mode: FuzzMode, seed: UInt64, limit: Double) {
        self.mode = mode
        self.seed = seed
        self.limit = limit
    }

    func begin(_ target: FuzzTarget, _ index: Int, _ input: [UInt8]) -> UInt64 {
        let now = FuzzClock.now()
        lock.lock()
        self.target = target.rawValue
        self.index = index
        self.input = input
        started = now
        lock.unlock()
        return now
    }

    func end() {
        lock.lock()
        started = 0
        input = []
        lock.unlock()
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                usleep(100_000)
                lock.lock()
                let (started, target, index, input) = (self.started, self.target, self.index, self.input)
                lock.unlock()
                guard started != 0, Double(FuzzClock.now() &- started) / 1e9 > limit else { continue }
                let text = mode.hang(target, seed: seed, index: index, input: input, limit: limit)
                print(text)
                fflush(nil)
                note(text)
                _exit(2)
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
