import CEditLine
import Foundation
import KVReplCore

/// The interactive loop on libedit: prompt, line editing, persistent history
/// (~/.kvrepl_history) and tab completion of commands, collections, indexes and keys.
enum LineEditor {
    // libedit calls back through C function pointers without context, and the loop runs
    // on the main thread only: these globals hold the completion state for that thread.
    nonisolated(unsafe) static var session: ShellSession?
    nonisolated(unsafe) static var candidates: [String] = []
    nonisolated(unsafe) static var next = 0
    nonisolated(unsafe) static var progressShown = false

    /// Erases a progress line left on the terminal, before the next output.
    static func clearProgress() {
        guard progressShown else { return }
        progressShown = false
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    /// libedit decodes typed bytes through the C library's character type: in the "C"
    /// locale every process starts in, it drops each non-ASCII byte ("Tromsø" arrives as
    /// "Troms"). So the environment's character type is taken (`LANG`, `LC_ALL`,
    /// `LC_CTYPE`), and "C.UTF-8" when that is not UTF-8. Only `LC_CTYPE` changes: number
    /// formatting stays the C locale's.
    static func useUTF8CharacterType() {
        let chosen = setlocale(LC_CTYPE, "").map { String(cString: $0) } ?? ""
        let upper = chosen.uppercased()
        if !upper.contains("UTF-8") && !upper.contains("UTF8") {
            _ = setlocale(LC_CTYPE, "C.UTF-8")
        }
    }

    static func run(_ session: ShellSession) {
        self.session = session
        let history =
            (ProcessInfo.processInfo.environment["KVREPL_HISTORY"]
                ?? ((ProcessInfo.processInfo.environment["HOME"] ?? ".") + "/.kvrepl_history"))
        useUTF8CharacterType()
        kv_set_readline_name("kvrepl")
        kv_disable_filename_completion()
        kv_set_completer { text, _, _ in
            let typed = text.map { String(cString: $0) } ?? ""
            let line = kv_line_buffer().map { String(cString: $0) } ?? ""
            LineEditor.candidates = LineEditor.session?.completions(for: typed, line: line) ?? []
            LineEditor.next = 0
            guard let text else { return nil }
            return rl_completion_matches(
                text,
                { _, state in
                    if state == 0 { LineEditor.next = 0 }
                    guard LineEditor.next < LineEditor.candidates.count else { return nil }
                    defer { LineEditor.next += 1 }
                    return strdup(LineEditor.candidates[LineEditor.next])
                })
        }
        read_history(history)
        session.progress = { line in
            LineEditor.progressShown = true
            FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K").utf8))
        }
        session.confirm = { question in
            guard let answer = readline(question) else { return false }
            defer { free(answer) }
            return String(cString: answer).lowercased().hasPrefix("y")
        }
        let write = session.out, warn = session.err
        session.out = {
            clearProgress()
            write($0)
        }
        session.err = {
            clearProgress()
            warn($0)
        }
        print(
            "kvrepl on \(session.path)\(session.readOnly ? " (read-only)" : "") — type help for the commands, quit to leave"
        )
        while let raw = readline(session.prompt) {
            let line = String(cString: raw)
            free(raw)
            if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                add_history(line)
                write_history(history)
            }
            let outcome = session.run(line)
            clearProgress()
            if outcome == .quit { break }
        }
    }
}
