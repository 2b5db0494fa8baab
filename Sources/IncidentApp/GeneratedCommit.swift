// The commit the binaries were built from. Scripts/install writes the real one here for its
// build and puts this file back afterwards; a plain `swift build` reports "unknown".
let generatedCommit = "unknown"
