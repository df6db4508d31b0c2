// Package archtest holds the test that keeps the module's layers as
// ARCHITECTURE.md draws them: each package imports only the packages of
// the module its row allows. It has no code of its own.
package archtest
