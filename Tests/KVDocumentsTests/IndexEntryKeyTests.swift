import Foundation
import KVDocs
import KVDocsTestSupport
import Testing

/// The single-entry path of a secondary index (one value per field, the common write)
/// builds exactly the key the general path's combinations give, and steps aside for every
/// document the general path must handle.
@Suite struct IndexEntryKeyTests {
    static let definitions: [SecondaryIndexDefinition] = [
        SecondaryIndexDefinition(name: "a", fields: ["age"]),
        SecondaryIndexDefinition(name: "b", fields: ["last", "first"]),
        SecondaryIndexDefinition(name: "c", fields: ["address.city"], sparse: true),
        SecondaryIndexDefinition(name: "d", fields: ["tags[]"]),
        SecondaryIndexDefinition(name: "e", fields: ["address.city", "tags[]", "age"]),
        SecondaryIndexDefinition(name: "f", fields: ["first"], unique: true),
        SecondaryIndexDefinition(name: "g", fields: ["tags[]", "last"], sparse: true)
    ]

    @Test func theSingleEntryKeyIsTheGeneralPathsOnlyCombination() throws {
        var rng = SplitMix64(seed: 4747)
        let prefix: [UInt8] = [0x15, 0x02, 0x69, 0x00]
        var single = 0, stepsAside = 0, none = 0
        var key: [UInt8] = [9, 9, 9]
        for i in 0..<4000 {
            let document = DocumentGenerator.document(id: .int(Int64(i)), &rng)
            for definition in Self.definitions {
                let combinations = SecondaryIndexMaintainer.encodedValues(definition, document)
                switch SecondaryIndexMaintainer.singleEntryKey(definition, document, prefix: prefix, into: &key) {
                case true?:
                    #expect(combinations == [Array(key.dropFirst(prefix.count))], "\(definition.name): \(document)")
                    #expect(key.starts(with: prefix))
                    single += 1
                case false?:
                    #expect(
                        combinations.isEmpty && (definition.sparse || definition.unique),
                        "\(definition.name): \(document)")
                    none += 1
                case nil:
                    // Several values in a field: the general path, which may still find one
                    // distinct combination (a repeated element) or none.
                    stepsAside += 1
                }
            }
        }
        #expect(single > 1000 && stepsAside > 100 && none > 100, "\(single) \(stepsAside) \(none)")
    }
}
