// An app's logger (os.Logger on Apple platforms): `log.notice("…")`.
struct Log { func notice(_ message: String) {} }
let log = Log()
