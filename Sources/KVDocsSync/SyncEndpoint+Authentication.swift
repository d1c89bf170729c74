import Foundation

extension SyncEndpoint {
    func authenticate(_ request: SyncRequest) throws {
        guard let credentials else { return }
        let expected = Array(
            "Basic \(Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString())".utf8)
        let given = Array((request.headers["authorization"] ?? "").utf8)
        // Constant time in the length of the expected value.
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for (k, byte) in expected.enumerated() { difference |= byte ^ (k < given.count ? given[k] : 0) }
        guard difference == 0 else {
            throw SyncError(
                status: 401, error: "unauthorized", reason: "Name or password is incorrect.",
                headers: [("WWW-Authenticate", #"Basic realm="kvdocs""#)])
        }
    }
}
