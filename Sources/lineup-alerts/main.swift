import LineupAlertsTool

await Tool.main(Array(CommandLine.arguments.dropFirst()))
