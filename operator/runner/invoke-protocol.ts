// The protocol between the local job target (construct/jobs/local-job.ts), which writes a command line for the
// job runner's CLI (bin/invoke.ts), and that CLI, which parses it, runs the job and writes a result state
// the target reads back through terraform_remote_state. Both sides used to spell the flags, the quoting,
// the job's env var names and the state's outputs separately; a rename on one side then broke deploys
// only at apply time. Here each is written once, so the compiler and one round-trip test hold them
// together; both sides import the protocol from this one place.
//
//   invoke-args.ts   the flags, the usage text, parsing argv and building it (and the /bin/sh line) back
//   invocation.ts    resolving parsed arguments against the environment and the disk
//   result-state.ts  the result file and the result state's outputs

export * from "./invocation";
export * from "./invoke-args";
export * from "./result-state";
