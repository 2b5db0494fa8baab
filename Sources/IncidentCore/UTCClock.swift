/// The current time, injected so that tests control "now". (Not named `Clock`: that is the
/// standard library's protocol for measuring durations.)
public struct UTCClock: Sendable {
    public var now: @Sendable () -> UTCInstant

    public init(now: @escaping @Sendable () -> UTCInstant) {
        self.now = now
    }

    /// A clock that always answers `instant`.
    public static func fixed(_ instant: UTCInstant) -> UTCClock {
        UTCClock { instant }
    }
}
