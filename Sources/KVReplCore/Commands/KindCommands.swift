import KVDocs

// The commands that registered index kinds offer (IndexKind.commands): each parsed as
// `NAME COLLECTION VALUE… [using INDEX] [where …] [limit N] [offset N]`, run on the
// session's snapshot, its rows printed as documents are.
extension CommandTable {
    /// What a kind's command line holds.
    struct KindInvocation: Equatable, Sendable {
        var collection: String
        var values: [JSONValue]
        var index: String?
        var query: DocumentQuery
    }

    /// The shell's definition of a kind's command.
    static func kindCommand(_ command: IndexKindCommand) -> CommandDefinition<KindInvocation> {
        CommandDefinition<KindInvocation>(
            command.name, usage: command.usage, summary: command.summary, access: .read,
            completion: [.collection], keywords: ["using", "where", "and", "limit", "offset"],
            parse: { s in
                let collection = try s.expectWord("a collection name")
                var values: [JSONValue] = []
                for name in command.values {
                    values.append(try s.jsonValue("\(name) (a JSON literal)"))
                }
                var invocation = KindInvocation(
                    collection: collection, values: values, index: nil, query: DocumentQuery())
                try clauses(&s) { word, start, s in
                    switch word {
                    case "using": invocation.index = try s.expectWord("an index name after using")
                    case "where":
                        repeat { invocation.query.conditions.append(try condition(&s)) } while s.accept("and")
                    case "limit": invocation.query.limit = try s.expectCount("the limit")
                    case "offset": invocation.query.offset = try s.expectCount("the offset")
                    default:
                        throw s.fail("unexpected \"\(word)\": expected using, where, limit or offset", at: start)
                    }
                }
                return invocation
            }
        ) { session, invocation in
            let primaryKey = try session.documents().schema.collection(invocation.collection).primaryKey
            session.leadingColumns = [primaryKey]
            let rows = try session.reading { tx in
                try command.run(
                    IndexKindCommand.Invocation(
                        collection: invocation.collection, values: invocation.values, index: invocation.index,
                        query: invocation.query), tx)
            }
            for row in rows { session.emitRow(row, ShellDisplay.compactJSON(row)) }
        }
    }
}
