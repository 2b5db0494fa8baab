// libcurl, which Foundation's URLSession (FoundationNetworking) runs on, opened on first use: the
// curl functions FoundationNetworking calls are defined in curl.c as calls into libcurl.so.4
// (CLibraryLoader), so that a program linked with Swift's static runtime does not load libcurl and
// its 30 libraries at start (`incidents list` never makes a request). Only the load is for Swift.

// Opens libcurl.so.4 (once). Returns NULL, or what to tell the user (free() it): "HTTP requests
// need libcurl4: apt-get install libcurl4 (dlopen's reason)".
char *ccurl_load(void);
// The message ccurl_load gives when `soname` cannot be opened (NULL when it can): for tests.
char *ccurl_probe(const char *soname);
