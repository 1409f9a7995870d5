// Package records writes and reads the record files of a replay run (SPEC 6).
package records

// SchemaVersion is the version of the record files' schemas and of run.json.
const SchemaVersion = 1
