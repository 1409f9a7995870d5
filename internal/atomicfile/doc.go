// Package atomicfile makes outputs appear whole or not at all: a file is written to a
// hidden temporary sibling and renamed over its final name once complete (WriteFile,
// Write), and an output directory is built in a temporary sibling directory and
// renamed to its final name by Commit (Dir). A reader never sees a partial file
// under a final name; an interrupted writer leaves only a temporary name.
//
// Files are created with mode 0644 and directories 0755 (outputs are for sharing), the
// data is synced before the rename, and a final path that exists and is not a regular
// file (a directory, a device such as /dev/stdout, a symbolic link) is never replaced.
package atomicfile
