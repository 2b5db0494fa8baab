/// Counted nouns in messages: "1 attempt", "2 attempts", "0 incidents" (English: the singular
/// only for exactly one).
public enum Plural {
    /// `count` and the noun, singular for 1, else `plural` (default: the noun plus `s`).
    public static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
