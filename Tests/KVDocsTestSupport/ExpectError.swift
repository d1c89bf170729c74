import KVDocs
import Testing

/// Expects `body` to throw a ``KVDocsError`` of `kind`, and returns it.
@discardableResult
package func expectError<R>(
    _ kind: KVDocsError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
)
    -> KVDocsError?
{
    do {
        _ = try body()
        Issue.record("expected a \(kind) error; nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as KVDocsError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a \(kind) error, not \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
