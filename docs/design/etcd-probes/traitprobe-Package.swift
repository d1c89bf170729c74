// swift-tools-version:6.1
import PackageDescription
let package = Package(name: "traitprobe",
  products: [.library(name: "EtcdPart", targets: ["EtcdPart"]), .executable(name: "tool", targets: ["tool"])],
  traits: [.trait(name: "Etcd", description: "the etcd backend (AsyncHTTPClient)")],
  dependencies: [.package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0")],
  targets: [
    .target(name: "Core"),
    .target(name: "EtcdPart", dependencies: ["Core", .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Etcd"]))]),
    .executableTarget(name: "tool", dependencies: ["Core", "EtcdPart"]),
  ])
