import LineupSyncTool

await Tool.main(Array(CommandLine.arguments.dropFirst()))
