/// FTS5's `highlight()` and `snippet()` over a column's text.
package enum Highlighter {
    /// The text with each matched phrase instance wrapped in the markers; overlapping
    /// instances are merged into one pair. An instance that ends past the column's last
    /// token (positions a failed NEAR test left from another row, reported under OR or NOT)
    /// is opened and never closed, as FTS5's `fts5HighlightCb` closes a span only at the
    /// token where it ends.
    package static func highlight(
        _ text: String, tokenizer: TextTokenizer, instances: [PhraseInstance], markers: HighlightMarkers
    ) -> String {
        let tokens = tokenizer.tokens(text)
        let spans = merged(instances, tokenCount: tokens.count)
        let unclosed = instances.contains { $0.start < tokens.count && $0.start + $0.length > tokens.count }
        return render(
            Array(text.utf8), tokens: tokens, spans: spans, from: 0, to: tokens.count, markers: markers,
            wholeText: true,
            lastUnclosed: unclosed)
    }

    /// Token ranges of the instances, sorted, overlapping ones merged.
    static func merged(_ instances: [PhraseInstance], tokenCount: Int) -> [ClosedRange<Int>] {
        var spans: [ClosedRange<Int>] = []
        for inst in instances.sorted(by: { $0.start < $1.start }) where inst.start < tokenCount {
            let span = inst.start...min(inst.start + inst.length - 1, tokenCount - 1)
            if let last = spans.last, span.lowerBound <= last.upperBound {
                spans[spans.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else {
                spans.append(span)
            }
        }
        return spans
    }

    /// The bytes of tokens `from..<to` (or the whole text), with markers around spans.
    static func render(
        _ bytes: [UInt8], tokens: [TextToken], spans: [ClosedRange<Int>], from: Int, to: Int,
        markers: HighlightMarkers, wholeText: Bool, lastUnclosed: Bool = false
    ) -> String {
        guard !tokens.isEmpty, from < to else { return wholeText ? String(decoding: bytes, as: UTF8.self) : "" }
        var out: [UInt8] = []
        var cursor = wholeText ? 0 : tokens[from].start
        for (k, span) in spans.enumerated() {
            let lo = max(span.lowerBound, from), hi = min(span.upperBound, to - 1)
            guard lo <= hi else { continue }
            out += bytes[cursor..<tokens[lo].start]
            out += Array(markers.open.utf8)
            out += bytes[tokens[lo].start..<tokens[hi].end]
            if !(lastUnclosed && k == spans.count - 1) { out += Array(markers.close.utf8) }
            cursor = tokens[hi].end
        }
        let end = wholeText ? bytes.count : tokens[to - 1].end
        if cursor < end { out += bytes[cursor..<end] }
        return String(decoding: out, as: UTF8.self)
    }

    /// FTS5's `snippet()` (fts5_aux.c): for each instance of each column, a window of
    /// `options.tokens` tokens starting at it scores 1000 per distinct phrase starting in
    /// it and 1 per repeat, and is re-centred on the first and last of them; the window
    /// starting at the sentence that holds the instance (a token after `.` or `:` and
    /// whitespace, or the first) scores the same plus 100 (120 at the column's start). The
    /// first best window wins. It is written with the matches that start in it marked,
    /// an ellipsis before when it does not start the column, and the rest of the column
    /// when it reaches the last token (else an ellipsis). `instances` are in `xInst` order.
    package static func snippet(
        _ texts: [String], tokenizer: TextTokenizer, instances: [(instance: PhraseInstance, phrase: Int)],
        options: TextSnippetOptions
    ) -> String {
        let size = max(1, min(64, options.tokens))
        var bestColumn = 0, bestStart = 0, bestScore = 0
        var columnTokens: [[TextToken]] = []
        for (column, text) in texts.enumerated() {
            let tokens = tokenizer.tokens(text)
            columnTokens.append(tokens)
            let here = instances.filter { $0.instance.column == column }
            guard !here.isEmpty else { continue }
            let bytes = Array(text.utf8)
            var sentences: [Int] = []
            for (i, token) in tokens.enumerated() {
                if i == 0 {
                    sentences.append(0)
                    continue
                }
                var j = token.start - 1
                while j >= 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j -= 1 }
                if j != token.start - 1, j >= 0, bytes[j] == UInt8(ascii: ".") || bytes[j] == UInt8(ascii: ":") {
                    sentences.append(i)
                }
            }
            let count = tokens.count
            // The score of the window of `size` tokens from `start`, and where it re-centres.
            func score(_ start: Int) -> (score: Int, adjusted: Int) {
                var seen = Set<Int>()
                var total = 0, first = -1, last = 0
                for (inst, phrase) in here where inst.start >= start && inst.start < start + size {
                    total += seen.insert(phrase).inserted ? 1000 : 1
                    if first < 0 { first = inst.start }
                    last = inst.start + inst.length
                }
                var adjusted = first - (size - (last - first)) / 2
                if adjusted + size > count { adjusted = count - size }
                return (total, max(0, adjusted))
            }
            for (inst, _) in here {
                let (s, adjusted) = score(inst.start)
                if s > bestScore { (bestScore, bestColumn, bestStart) = (s, column, adjusted) }
                if !sentences.isEmpty && count > size {
                    var jj = 0
                    while jj < sentences.count - 1 && sentences[jj + 1] <= inst.start { jj += 1 }
                    if sentences[jj] < inst.start {
                        let s = score(sentences[jj]).score + (sentences[jj] == 0 ? 120 : 100)
                        if s > bestScore { (bestScore, bestColumn, bestStart) = (s, column, sentences[jj]) }
                    }
                }
            }
        }
        guard bestColumn < texts.count else { return "" }
        let text = texts[bestColumn], tokens = columnTokens[bestColumn]
        let bytes = Array(text.utf8)
        let rangeEnd = bestStart + size - 1
        // Matches that start before the window are not marked.
        let spans = merged(
            instances.filter { $0.instance.column == bestColumn }.map(\.instance), tokenCount: tokens.count
        )
        .filter { $0.lowerBound >= bestStart }
        var out: [UInt8] = bestStart > 0 ? Array(options.ellipsis.utf8) : []
        guard bestStart < tokens.count else {
            return bestStart == 0 ? text : String(decoding: out, as: UTF8.self)
        }
        var cursor = bestStart > 0 ? tokens[bestStart].start : 0
        let last = min(rangeEnd, tokens.count - 1)
        for span in spans where span.lowerBound <= last {
            out += bytes[cursor..<tokens[span.lowerBound].start]
            out += Array(options.markers.open.utf8)
            let hi = min(span.upperBound, last)
            out += bytes[tokens[span.lowerBound].start..<tokens[hi].end]
            out += Array(options.markers.close.utf8)
            cursor = tokens[hi].end
        }
        if rangeEnd >= tokens.count - 1 {
            out += bytes[cursor...]
        } else {
            out += bytes[cursor..<tokens[last].end]
            out += Array(options.ellipsis.utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Markers to wrap matches with in highlights and snippets.
public struct HighlightMarkers: Sendable, Hashable {
    /// The text put before each match.
    public var open: String
    /// The text put after each match.
    public var close: String
    /// Markers that wrap each match in `open` and `close`.
    /// - Parameters:
    ///   - open: the text put before each match.
    ///   - close: the text put after each match.
    public init(open: String, close: String) {
        self.open = open
        self.close = close
    }
}

/// How to make a snippet, like FTS5's `snippet()`.
public struct TextSnippetOptions: Sendable, Hashable {
    /// The markers around matches in the snippet.
    public var markers: HighlightMarkers
    /// The text marking where the snippet cuts the field's text, at either end.
    public var ellipsis: String
    /// The most tokens in the snippet (clamped to 1...64, as FTS5).
    public var tokens: Int
    /// Options of a snippet: by default `[` and `]` around matches, `…` where the text is
    /// cut, and at most 15 tokens.
    /// - Parameters:
    ///   - markers: the markers around matches.
    ///   - ellipsis: the text marking a cut.
    ///   - tokens: the most tokens in the snippet (clamped to 1...64).
    public init(
        markers: HighlightMarkers = HighlightMarkers(open: "[", close: "]"), ellipsis: String = "…", tokens: Int = 15
    ) {
        self.markers = markers
        self.ellipsis = ellipsis
        self.tokens = tokens
    }
}
