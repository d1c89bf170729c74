extension FixedWidthInteger {
    /// `self + other`, or the type's bound on the side of the overflow: for limits,
    /// offsets and sequence numbers a caller supplies, where `offset + limit` past
    /// `Int.max` means "no bound", not a trap.
    package func saturatingAdd(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}
