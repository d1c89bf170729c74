import KVDocs

extension ShellSession {
    /// Completion candidates for the word being typed (`text`) given the line so far, from
    /// the command table: command names first, then what each command's definition says
    /// completes its arguments (collections, indexes, keys, words) and its keywords.
    public func completions(for text: String, line: String) -> [String] {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let index = line.hasSuffix(" ") || words.isEmpty ? words.count : words.count - 1
        guard index > 0 else { return CommandTable.names.filter { $0.hasPrefix(text) } }
        guard let command = CommandTable.definition(named: words[0].lowercased()) else { return [] }
        // Completion offers what it can: a schema that cannot be read offers no names (the
        // command itself then reports the error).
        let schema = store.flatMap { try? $0.schema }
        let collection = words.count > 1 ? schema?.collections[words[1]] : nil
        func candidates(_ source: CompletionSource) -> [String] {
            switch source {
            case .collection: return schema?.collections.keys.sorted() ?? []
            case .index: return collection.map { $0.definitions.map(\.name) } ?? []
            case .textIndex: return collection.map { $0.text.map(\.name) } ?? []
            case .words(let words): return command.name == "help" ? CommandTable.names : words
            case .key:
                return
                    (try? database.entries(.prefix(text), limit: 50, options: readOptions).collect()
                    .compactMap { ShellDisplay.printable($0.key) }.filter { !$0.contains(" ") }) ?? []
            }
        }
        var found: [String]
        if words.count >= index, index >= 2, words[index - 1].lowercased() == "using" {
            // `using INDEX`: a geo index for near, any index of the collection for a kind's command.
            let all = collection.map { $0.definitions.map(\.name) } ?? []
            found = command.name == "near" ? collection.map { $0.geo.map(\.name) } ?? [] : all
            return found.filter { $0.hasPrefix(text) }
        } else if index <= command.completion.count {
            found = candidates(command.completion[index - 1])
        } else {
            found = command.completion.last == .key ? candidates(.key) : []
        }
        if index > command.completion.count || command.completion[index - 1] == .key { found += command.keywords }
        return found.filter { $0.hasPrefix(text) }
    }
}
