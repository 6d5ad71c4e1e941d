#version 450
layout(triangles) in;
layout(line_strip, max_vertices = 6) out;
in vec3 g_normal[];
in vec4 g_tip[];
out vec3 f_color;
void main() {
    for (int i = 0; i < 3; ++i) {
        f_color = abs(g_normal[i]);
        gl_Position = gl_in[i].gl_Position;
        EmitVertex();
        f_color = vec3(1.0);
        gl_Position = g_tip[i];
        EmitVertex();
        EndPrimitive();
    }
}
