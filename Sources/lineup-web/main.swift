import LineupWebTool

await Tool.main(Array(CommandLine.arguments.dropFirst()))
