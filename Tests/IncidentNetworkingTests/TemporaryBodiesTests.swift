import Foundation
import Testing
@testable import IncidentNetworking
import TestSupport

@Suite("Temporary body files")
struct TemporaryBodiesTests {
    /// The PID of a child process that has exited and been reaped: no process has it now.
    private func deadPID() throws -> pid_t {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let pid = child.processIdentifier
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "pid \(pid) must be dead for this test")
        return pid
    }

    private func write(_ name: String, in directory: URL) throws {
        try Data("body".utf8).write(to: directory.appendingPathComponent(name))
    }

    @Test("Owner PIDs are read only from names the module writes", arguments: [
        ("incident-http-pid123-5C4B9E0A-1F2E-4D3C-8B7A-69584736251A.body", Int32(123)),
        ("incident-http-pid1-x.body", 1),
        ("incident-http-pid0-x.body", nil),
        ("incident-http-pid-x.body", nil),
        ("incident-http-pid12a-x.body", nil),
        ("incident-http-pid12-.body", nil),
        ("incident-http-pid12-x.tmp", nil),
        ("incident-http-12345678-1F2E-4D3C-8B7A-69584736251A.body", nil),  // an older version's name: no owner known
        ("notes-pid12-x.body", nil),
    ] as [(String, pid_t?)])
    func ownerPIDs(name: String, pid: pid_t?) {
        #expect(TemporaryBodies.ownerPID(ofFileNamed: name) == pid)
    }

    @Test("removeLeftovers removes a dead process's file only; live owners' and unrelated files stay")
    func removesOnlyDeadOwners() throws {
        let directory = try TestPaths.temporaryDirectory("leftovers")
        let dead = try deadPID()
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.run()
        defer {
            kill(sleeper.processIdentifier, SIGKILL)  // SIGTERM may be ignored, inherited from the test runner
            sleeper.waitUntilExit()
        }
        let live = sleeper.processIdentifier

        let deadFile = "incident-http-pid\(dead)-AAAA.body"
        let liveFile = "incident-http-pid\(live)-BBBB.body"
        let unrelated = ["notes.txt", "incident-http-pid\(dead)-CCCC.tmp", "incident-http-5C4B9E0A-1F2E.body", "incident-stub-x.body"]
        for name in [deadFile, liveFile] + unrelated { try write(name, in: directory) }
        // A directory with a dead owner's name is not a body file.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("incident-http-pid\(dead)-DDDD.body"),
                                                withIntermediateDirectories: false)
        // A dead PID whose file is still locked: the owner lives in another PID namespace.
        let lockedFile = "incident-http-pid\(dead)-EEEE.body"
        try write(lockedFile, in: directory)
        let lockFD = open(directory.appendingPathComponent(lockedFile).path, O_RDONLY)
        try #require(lockFD >= 0)
        defer { close(lockFD) }
        #expect(flock(lockFD, LOCK_EX) == 0)
        // This process's own body, being written.
        let own = try TemporaryBodies.create(in: directory)
        try own.write(Data("partial".utf8))

        let removed = TemporaryBodies.removeLeftovers(in: directory)

        #expect(removed.map(\.lastPathComponent) == [deadFile])
        #expect(Set(leftovers(in: directory)) == Set([liveFile, lockedFile, own.url.lastPathComponent,
                                                      "incident-http-pid\(dead)-DDDD.body"] + unrelated))
        own.remove()
        #expect(!FileManager.default.fileExists(atPath: own.url.path))
        #expect(TemporaryBodies.removeLeftovers(in: directory).isEmpty)
    }

    @Test("A body file is locked while its owner has it: another process's removeLeftovers cannot take it")
    func ownFileIsLocked() throws {
        let directory = try TestPaths.temporaryDirectory("leftovers")
        let body = try TemporaryBodies.create(in: directory)
        let fd = open(body.url.path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK)
        let mode = try FileManager.default.attributesOfItem(atPath: body.url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        body.remove()
        // Another test of this process spawning a child at that moment shares the lock's open
        // file description from its fork until its exec closes it (O_CLOEXEC): a few
        // milliseconds, so the lock is tried for up to 2 s.
        var released = false
        for _ in 0..<200 where !released {
            released = flock(fd, LOCK_EX | LOCK_NB) == 0
            if !released { usleep(10_000) }
        }
        #expect(released, "removal releases the lock")
    }

    @Test("Creating a client removes the leftovers in its temporary directory", arguments: ["urlsession", "stub"])
    func clientCreationCleansUp(kind: String) throws {
        let directory = try TestPaths.temporaryDirectory("leftovers")
        let deadFile = "incident-http-pid\(try deadPID())-FFFF.body"
        try write(deadFile, in: directory)
        try write("keep.txt", in: directory)
        let configuration = NetworkConfiguration(temporaryDirectory: directory)
        let client: any HTTPClient = kind == "stub" ? StubHTTPClient(configuration: configuration)
                                                    : URLSessionHTTPClient(configuration: configuration)
        #expect(leftovers(in: directory) == ["keep.txt"])
        _ = client
    }
}
