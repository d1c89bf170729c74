/// FTS5's `highlight()` and `snippet()` over a column's text.
enum Highlighter {
    /// The text with each matched phrase instance wrapped in the markers; overlapping
    /// instances are merged into one pair.
    static func highlight(_ text: String, tokenizer: TextTokenizer, instances: [PhraseInstance], markers: HighlightMarkers) -> String {
        let tokens = tokenizer.tokens(text)
        let spans = merged(instances, tokenCount: tokens.count)
        return render(Array(text.utf8), tokens: tokens, spans: spans, from: 0, to: tokens.count, markers: markers, wholeText: true)
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
    static func render(_ bytes: [UInt8], tokens: [TextToken], spans: [ClosedRange<Int>], from: Int, to: Int,
                       markers: HighlightMarkers, wholeText: Bool) -> String {
        guard !tokens.isEmpty, from < to else { return wholeText ? String(decoding: bytes, as: UTF8.self) : "" }
        var out: [UInt8] = []
        var cursor = wholeText ? 0 : tokens[from].start
        for span in spans {
            let lo = max(span.lowerBound, from), hi = min(span.upperBound, to - 1)
            guard lo <= hi else { continue }
            out += bytes[cursor..<tokens[lo].start]
            out += Array(markers.open.utf8)
            out += bytes[tokens[lo].start..<tokens[hi].end]
            out += Array(markers.close.utf8)
            cursor = tokens[hi].end
        }
        let end = wholeText ? bytes.count : tokens[to - 1].end
        if cursor < end { out += bytes[cursor..<end] }
        return String(decoding: out, as: UTF8.self)
    }

    /// A window of at most `options.tokens` tokens from the column with the best window:
    /// 1000 points per distinct phrase in the window and 1 per repeat, a bonus when the
    /// window starts a sentence, re-centred on its matches; ellipses where the window does
    /// not reach the column's start or end.
    static func snippet(_ texts: [String], tokenizer: TextTokenizer, instances: [PhraseInstance],
                        phraseOf: [PhraseInstance: Int], options: TextSnippetOptions) -> String {
        let size = max(1, min(64, options.tokens))
        var best: (score: Int, column: Int, start: Int)? = nil
        for (column, text) in texts.enumerated() {
            let tokens = tokenizer.tokens(text)
            guard !tokens.isEmpty else { continue }
            let here = instances.filter { $0.column == column }
            let bytes = Array(text.utf8)
            let sentenceStarts = Set(tokens.indices.filter { i in
                i == 0 || bytes[..<tokens[i].start].last(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }).map { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ":") } ?? true
            })
            let candidates = here.isEmpty ? [0] : here.map(\.start)
            for anchor in candidates {
                var start = anchor
                let inWindow = here.filter { $0.start >= start && $0.start + $0.length <= start + size }
                if let first = inWindow.map(\.start).min(), let last = inWindow.map({ $0.start + $0.length - 1 }).max() {
                    start = first - (size - (last - first + 1)) / 2
                }
                start = max(0, min(start, tokens.count - size))
                let window = here.filter { $0.start >= start && $0.start + $0.length <= start + size }
                var seen = Set<Int>()
                var score = 0
                for inst in window {
                    score += seen.insert(phraseOf[inst] ?? 0).inserted ? 1000 : 1
                }
                if sentenceStarts.contains(start) { score += start == 0 ? 120 : 100 }
                if let current = best, current.score >= score { continue }
                best = (score, column, start)
            }
        }
        guard let best else { return "" }
        let text = texts[best.column]
        let tokens = tokenizer.tokens(text)
        let end = min(best.start + size, tokens.count)
        let spans = merged(instances.filter { $0.column == best.column }, tokenCount: tokens.count)
        var result = best.start > 0 ? options.ellipsis : ""
        result += render(Array(text.utf8), tokens: tokens, spans: spans, from: best.start, to: end, markers: options.markers, wholeText: false)
        if end < tokens.count { result += options.ellipsis }
        return result
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
    public init(markers: HighlightMarkers = HighlightMarkers(open: "[", close: "]"), ellipsis: String = "…", tokens: Int = 15) {
        self.markers = markers
        self.ellipsis = ellipsis
        self.tokens = tokens
    }
}
