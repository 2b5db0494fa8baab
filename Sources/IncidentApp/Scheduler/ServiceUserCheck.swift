import Foundation

/// What `check-config` run as root cannot see by itself: whether the user the service runs as
/// (the units' and the crontab's `trafficincidents`) may read the files it will read. Root
/// reads every file, so a key file or `keys.env` made root-only passed the check and failed
/// the service (issue 20, point 3).
enum ServiceUserCheck {
    /// The files of `paths` that `user` cannot open for reading, each with the system's reason
    /// (`/etc/trafficincidents/keys.env: Permission denied`); empty when this process is not
    /// root or the user does not exist (nil then, to tell apart "not checked").
    ///
    /// Opens each file with the user's identity (its uid, gid and supplementary groups, set as
    /// this process's effective ones for the check and restored after), so every rule the
    /// kernel applies (directories on the path, modes, groups, ACLs) counts.
    static func unreadable(_ paths: [String], by user: String) -> [String]? {
        guard geteuid() == 0, let entry = getpwnam(user) else { return nil }
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(user, gid, &groups, &count)
        }
        let savedCount = getgroups(0, nil)
        var saved = [gid_t](repeating: 0, count: Int(max(savedCount, 0)))
        _ = getgroups(savedCount, &saved)
        guard setgroups(Int(count), groups) == 0, setegid(gid) == 0, seteuid(uid) == 0 else {
            _ = seteuid(0); _ = setegid(0); _ = setgroups(saved.count, saved)
            return nil
        }
        var problems: [String] = []
        for path in paths {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 { close(descriptor) } else { problems.append("\(path): \(String(cString: strerror(errno)))") }
        }
        _ = seteuid(0)
        _ = setegid(0)
        _ = setgroups(saved.count, saved)
        return problems
    }
}
