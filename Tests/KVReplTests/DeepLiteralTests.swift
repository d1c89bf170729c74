import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

@testable import KVReplCore

/// Tuple literals nest as deep as the tuple decoder reads back, and no deeper: past it they
/// are an error naming the column, never a stack overflow.
@Suite struct DeepLiteralTests {
    /// A tuple literal with `opening` "(" (so `opening - 1` tuples nested in the outermost).
    static func nested(_ opening: Int) -> String {
        String(repeating: "(", count: opening) + "1" + String(repeating: ")", count: opening)
    }

    @Test func tupleLiteralsNestedToTheDecoderLimitRoundTrip() throws {
        let limit = Tuple.maximumNestingDepth
        let literal = Self.nested(limit + 1)
        var scanner = LineScanner(literal)
        let key = try onThread { try scanner.keyLiteral() }
        var expected = Tuple([1])
        for _ in 0..<limit { expected = Tuple([.tuple(expected)]) }
        #expect(key == expected.encoded)
        #expect(try Tuple(decoding: key) == expected)
        #expect(
            ShellDisplay.key(key, keyspaces: nil) == String(repeating: "(", count: limit + 1) + "1,)"
                + String(repeating: ",)", count: limit))

        let s = try RecordingSession()
        #expect(s.run("put \(literal) deep").outcome == .ok)
        #expect(
            s.run("get \(literal)").out == [
                #"{"key":"\#(ShellDisplay.key(key, keyspaces: nil))","key_hex":"\#(key.map { String(format: "%02x", $0) }.joined())","value":"deep","value_hex":"64656570"}"#
            ])
    }

    @Test(arguments: [Tuple.maximumNestingDepth + 2, 4_000, 100_000])
    func tupleLiteralsNestedPastTheLimitAreAnErrorNamingTheColumn(opening: Int) throws {
        let message =
            "tuples nested more than \(Tuple.maximumNestingDepth) levels deep inside a key (the most the tuple decoder reads back)"
        // The first "(" too deep is the (limit + 2)th: the outermost is the key itself.
        let column = Tuple.maximumNestingDepth + 2
        let literal = Self.nested(opening)
        let errors = try onThread { () -> [ShellCommandError?] in
            var scanner = LineScanner(literal)
            var errors: [ShellCommandError?] = [nil, nil, nil]
            do { _ = try scanner.keyLiteral() } catch let e as ShellCommandError { errors[0] = e }
            do { _ = try ShellCommand.parse("get " + literal) } catch let e as ShellCommandError { errors[1] = e }
            // Unterminated, deep inside a later element.
            do { _ = try ShellCommand.parse("put (\"a\", " + String(repeating: "(", count: opening)) } catch let e
                as ShellCommandError
            { errors[2] = e }
            return errors
        }
        #expect(errors[0] == ShellCommandError(message: message, column: column))
        #expect(errors[1] == ShellCommandError(message: message, column: 4 + column))
        #expect(errors[2] == ShellCommandError(message: message, column: 10 + column - 1))
    }
}
