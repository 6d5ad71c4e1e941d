#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 18) out;
in vec3 g_world[];
layout(binding = 1) uniform Faces { mat4 face[6]; vec4 light; } f;
out vec3 f_world;
out float f_light_dist;
void main() {
    for (int face = 0; face < 6; ++face) {
        gl_Layer = face;
        for (int v = 0; v < 3; ++v) {
            f_world = g_world[v];
            f_light_dist = length(g_world[v] - f.light.xyz);
            gl_Position = f.face[face] * gl_in[v].gl_Position;
            EmitVertex();
        }
        EndPrimitive();
    }
}
