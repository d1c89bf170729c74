import CAllocationCount
import Foundation
import KVDocs

/// One measured figure: the median of the repeats.
struct Measurement: Codable {
    var section: String
    var name: String
    /// "swift", "c", "kvdocs", "sqlite", or a configuration label.
    var variant: String
    var operations: Int
    var seconds: Double
    var microsecondsPerOperation: Double { seconds / Double(max(operations, 1)) * 1e6 }
    var operationsPerSecond: Double { Double(operations) / max(seconds, 1e-12) }
    /// Extra figures (bytes on disk, …).
    var extra: [String: Double] = [:]

    enum CodingKeys: String, CodingKey {
        case section, name, variant, operations, seconds, extra, microsecondsPerOperation, operationsPerSecond
    }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(section, forKey: .section)
        try c.encode(name, forKey: .name)
        try c.encode(variant, forKey: .variant)
        try c.encode(operations, forKey: .operations)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(extra, forKey: .extra)
        try c.encode(microsecondsPerOperation, forKey: .microsecondsPerOperation)
        try c.encode(operationsPerSecond, forKey: .operationsPerSecond)
    }
    init(
        section: String, name: String, variant: String, operations: Int, seconds: Double, extra: [String: Double] = [:]
    ) {
        self.section = section
        self.name = name
        self.variant = variant
        self.operations = operations
        self.seconds = seconds
        self.extra = extra
    }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        section = try c.decode(String.self, forKey: .section)
        name = try c.decode(String.self, forKey: .name)
        variant = try c.decode(String.self, forKey: .variant)
        operations = try c.decode(Int.self, forKey: .operations)
        seconds = try c.decode(Double.self, forKey: .seconds)
        extra = try c.decode([String: Double].self, forKey: .extra)
    }
}

/// The run: sizes, repeats, scratch space and every measurement.
final class Bench {
    let n: Int
    let repeats: Int
    let quick: Bool
    let scratch: String
    var results: [Measurement] = []
    var peakMemory: [String: Double] = [:]
    let data: BenchData
    /// The text section's corpus sizes, when given on the command line.
    var textSizeOverride: [Int]?
    /// The points of the geo section.
    var geoPoints = 1_000_000
    /// The athletes of the apps section.
    var appAthletes = 18_000
    /// The vectors of the vector section.
    var vectorCount = 100_000
    /// What a run found out besides figures (the plans each side used), by name.
    var notes: [String: String] = [:]
    /// Only the measurements whose "NAME VARIANT" contains this text run (`--only`): the
    /// others are skipped, their setup still made. For profiling one workload.
    var only: String?

    init(n: Int, repeats: Int, quick: Bool) throws {
        self.n = n
        self.repeats = repeats
        self.quick = quick
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kvbench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        data = BenchData(n: n)
    }

    deinit { try? FileManager.default.removeItem(atPath: scratch) }

    /// A fresh, empty directory path for a database.
    func freshPath(_ label: String) -> String {
        let p = scratch + "/" + label + "-" + UUID().uuidString.prefix(8)
        try? FileManager.default.removeItem(atPath: p)
        return p
    }

    /// Runs `body` `repeats` times (each returns seconds and operations) and records the median.
    @discardableResult
    func measure(
        _ section: String, _ name: String, _ variant: String, repeats: Int? = nil,
        _ body: () throws -> (seconds: Double, operations: Int, extra: [String: Double])
    ) rethrows -> Measurement {
        if let only, !"\(name) \(variant)".contains(only) {
            return Measurement(section: section, name: name, variant: variant, operations: 1, seconds: 0, extra: [:])
        }
        var runs: [(Double, Int, [String: Double])] = []
        for _ in 0..<(repeats ?? self.repeats) { runs.append(try Self.countingAllocations(body)) }
        runs.sort { $0.0 < $1.0 }
        let median = runs[runs.count / 2]
        let m = Measurement(
            section: section, name: name, variant: variant, operations: median.1, seconds: median.0, extra: median.2)
        results.append(m)
        FileHandle.standardError.write(
            Data(
                String(format: "  %-10@ %-38@ %-14@ %10.3f µs/op\n", section, name, variant, m.microsecondsPerOperation)
                    .utf8))
        return m
    }

    /// Measures several variants of one workload with their repeats interleaved (A, B, A,
    /// B, …), so drift in the machine's speed during the run hits every variant alike.
    func measureAlternating(
        _ section: String, _ name: String,
        _ variants: [(String, () throws -> (seconds: Double, operations: Int, extra: [String: Double]))]
    ) throws {
        var runs = Array(repeating: [(Double, Int, [String: Double])](), count: variants.count)
        for _ in 0..<repeats {
            for (i, variant) in variants.enumerated() { runs[i].append(try Self.countingAllocations(variant.1)) }
        }
        for (i, variant) in variants.enumerated() {
            let sorted = runs[i].sorted { $0.0 < $1.0 }
            let median = sorted[sorted.count / 2]
            let m = Measurement(
                section: section, name: name, variant: variant.0, operations: median.1, seconds: median.0,
                extra: median.2)
            results.append(m)
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "  %-10@ %-38@ %-14@ %10.3f µs/op\n", section, name, variant.0,
                        m.microsecondsPerOperation
                    ).utf8))
        }
    }

    /// The key of a measurement's allocations per operation in ``Measurement/extra``.
    static let allocationsKey = "allocations_per_op"

    /// Runs `body`, adding to its figures the heap allocations per operation that the
    /// calling thread made during it (CAllocationCount; not LevelDB's background threads),
    /// unless `body` gave its own (a body that times several passes counts the reported one).
    static func countingAllocations(
        _ body: () throws -> (seconds: Double, operations: Int, extra: [String: Double])
    ) rethrows -> (Double, Int, [String: Double]) {
        let before = kv_allocations()
        var run = try body()
        let allocations = kv_allocations() - before
        if kv_allocations_counted(), run.extra[allocationsKey] == nil {
            run.extra[allocationsKey] = Double(allocations) / Double(max(run.operations, 1))
        }
        return (run.seconds, run.operations, run.extra)
    }

    /// Peak resident memory of a section: reset the high-water mark, run, read it.
    func section(_ name: String, _ body: () throws -> Void) rethrows {
        FileHandle.standardError.write(Data("\(name)\n".utf8))
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        try body()
        peakMemory[name] = Self.peakResidentMegabytes()
    }

    static func peakResidentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kb = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kb / 1024
    }
}

/// db_bench's conventions: 16-byte keys ("%016d"), 100-byte values half compressible.
struct BenchData {
    let n: Int
    /// n keys of 16 bytes, key i = "%016d" of i (so sequential order is key order).
    let keys: [UInt8]
    /// Keys that sort between existing ones but are never written.
    let missingKeys: [UInt8]
    /// A random permutation of 0..<n.
    let order: [Int32]
    /// 1 MiB of values: each 100-byte window is half random, half repeated.
    let values: [UInt8]
    static let valueSize = 100

    init(n: Int) {
        self.n = n
        var keys = [UInt8]()
        keys.reserveCapacity(n * 16)
        var missing = [UInt8]()
        missing.reserveCapacity(n * 16)
        for i in 0..<n {
            keys += Array(String(format: "%016d", i).utf8)
            missing += Array(String(format: "%015d", i).utf8) + [UInt8(ascii: "x")]
        }
        self.keys = keys
        self.missingKeys = missing
        var rng = BenchRandom(seed: 301)
        var order = (0..<Int32(n)).map { $0 }
        for i in stride(from: n - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        self.order = order
        var values = [UInt8]()
        values.reserveCapacity(1 << 20)
        while values.count < 1 << 20 {
            let random = (0..<50).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            values +=
                random + Array(random.prefix(10)) + Array(random.prefix(10)) + Array(random.prefix(10))
                + Array(random.prefix(10)) + Array(random.prefix(10))
        }
        self.values = values
    }

    @inline(__always) func key(_ i: Int) -> ArraySlice<UInt8> { keys[(i * 16)..<(i * 16 + 16)] }
    @inline(__always) func value(_ i: Int) -> ArraySlice<UInt8> {
        let start = (i * 97) % (values.count - Self.valueSize)
        return values[start..<(start + Self.valueSize)]
    }
}

/// SplitMix64: the same generator as KVDocs's `SplitMix64` (Sources/KVSupport/SplitMix64.swift),
/// copied because that one has `package` access, which this separate package cannot see
/// ("cannot find type 'SplitMix64' in scope"), and making it public would put a random
/// generator into the library's API. Keep the two identical, so seeds mean the same data.
struct BenchRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Bytes in a directory.
func directorySize(_ path: String) -> Double {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0.0) { total, name in
        total
            + Double(
                ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? NSNumber)?.intValue
                    ?? 0)
    }
}
