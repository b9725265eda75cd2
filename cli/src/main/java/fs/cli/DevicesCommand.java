package fs.cli;

import fs.HumanSize;
import fs.backend.opencl.OpenCl;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Lists OpenCL platforms and devices and marks the one {@code --backend auto} would run on. */
@Command(name = "devices", mixinStandardHelpOptions = true, description = "Lists OpenCL platforms and devices.")
final class DevicesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Optional<String> unavailable = OpenCl.unavailableReason();
        if (unavailable.isPresent()) {
            out.println("no OpenCL device: " + unavailable.get());
            return 0;
        }
        OpenCl.Selection auto = OpenCl.select(false, null);
        int autoIndex = auto instanceof OpenCl.Selection.Selected s ? s.device().index() : -1;
        List<OpenCl.Platform> platforms = OpenCl.platforms();
        for (OpenCl.Platform platform : platforms) {
            out.println("platform: " + platform.name() + " (" + platform.vendor() + ", " + platform.version() + ")");
            for (OpenCl.Device d : platform.devices()) {
                out.printf(Locale.ROOT, "%s %d: %s [%s] %s, %d compute units, %s global, %s max alloc, %s local%n",
                        d.index() == autoIndex ? "*" : " ", d.index(), d.name(), d.type(), d.version(),
                        d.computeUnits(), HumanSize.of(d.globalMemSize()), HumanSize.of(d.maxAllocSize()),
                        HumanSize.of(d.localMemSize()));
                List<String> extensions = d.notableExtensions();
                out.println("      extensions: " + (extensions.isEmpty() ? "none of " + OpenCl.NOTABLE_EXTENSIONS
                        : String.join(" ", extensions)));
            }
        }
        out.println(switch (auto) {
            case OpenCl.Selection.Selected s -> "* = the device --backend auto uses";
            case OpenCl.Selection.NotSelected n -> "--backend auto runs on the CPU: " + n.reason();
        });
        return 0;
    }

}
