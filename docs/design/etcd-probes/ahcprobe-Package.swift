// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "ahcprobe", platforms: [.macOS(.v13)],
  dependencies: [.package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0")],
  targets: [.executableTarget(name: "ahcprobe", dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")])])
