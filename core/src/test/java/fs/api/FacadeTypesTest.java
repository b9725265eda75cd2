package fs.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The facade is what a caller sees of fs: its public types' public methods take and return only its own types, the
 * JDK's and Jackson's JSON trees (a tool's schema), never a type of fs's engine packages (fs.generate, fs.model, ...),
 * which may change under it. FsException, the one error type, is fs's root package.
 */
class FacadeTypesTest {
    @Test
    void publicSignaturesUseNoEnginePackage() throws ClassNotFoundException {
        List<String> leaks = new ArrayList<>();
        int checked = 0;
        for (JavaClass type : new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("fs.api")) {
            if (!type.getPackageName().equals("fs.api") || !visible(Class.forName(type.getName()))) continue;
            for (Method method : Class.forName(type.getName()).getDeclaredMethods()) {
                if (!Modifier.isPublic(method.getModifiers()) || method.isSynthetic()) continue;
                checked++;
                List<Type> used = new ArrayList<>(List.of(method.getGenericParameterTypes()));
                used.add(method.getGenericReturnType());
                for (Type t : used) collectLeaks(t, type.getSimpleName() + "." + method.getName(), leaks);
            }
        }
        assertTrue(checked > 20, "the facade's public methods were found: " + checked);
        assertEquals(List.of(), leaks);
    }

    /** Public, and so is every class it is nested in. */
    private static boolean visible(Class<?> c) {
        for (; c != null; c = c.getEnclosingClass()) if (!Modifier.isPublic(c.getModifiers())) return false;
        return true;
    }

    private static void collectLeaks(Type t, String where, List<String> leaks) {
        if (t instanceof ParameterizedType p) {
            collectLeaks(p.getRawType(), where, leaks);
            for (Type arg : p.getActualTypeArguments()) collectLeaks(arg, where, leaks);
            return;
        }
        if (!(t instanceof Class<?> c)) return;
        while (c.isArray()) c = c.getComponentType();
        if (c.isPrimitive()) return;
        String pkg = c.getPackageName();
        boolean own = pkg.equals("fs.api") || pkg.equals("fs") || pkg.startsWith("java.")
                || pkg.equals("com.fasterxml.jackson.databind");
        if (!own) leaks.add(where + " uses " + c.getName());
    }
}
